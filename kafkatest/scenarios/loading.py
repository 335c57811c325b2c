"""Moved to `kafkatest.jobs` (``from kafkatest.jobs import load_job``); this old path
still works, with a DeprecationWarning naming the new one."""

from kafkatest.scenarios.process import __getattr__ as __getattr__
