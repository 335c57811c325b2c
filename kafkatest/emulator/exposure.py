"""Deprecated home of `ExposedEmulatorWarning` (a warnings filter may name this path):
the warning is `kafkatest.emulator.ExposedEmulatorWarning`, defined in `kafkatest.exposure`."""

from kafkatest.exposure import ExposedEmulatorWarning

__all__ = ["ExposedEmulatorWarning"]
