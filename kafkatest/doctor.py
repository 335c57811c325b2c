"""Moved to `kafkatest.apps.doctor`; this old path still works, with a DeprecationWarning."""

from kafkatest._ground.lean_imports import moved_to

__getattr__ = moved_to("kafkatest.apps.doctor")
