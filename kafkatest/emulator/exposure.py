"""Deprecated home of `ExposedEmulatorWarning` (a warnings filter may name this path):
the warning is `kafkatest.emulator.ExposedEmulatorWarning`, defined in `kafkatest._ground.exposure`."""

from kafkatest._ground.exposure import ExposedEmulatorWarning

__all__ = ["ExposedEmulatorWarning"]
