"""Moved to `kafkatest.jobs` (``from kafkatest.jobs import JobProcess``); this old path
still works, with a DeprecationWarning naming the new one (as `scenarios.loading` does)."""

import warnings
from typing import Any

import kafkatest.jobs as _moved


def __getattr__(name: str) -> Any:
    if name.startswith("__"):  # the import system's own questions (__path__ ...)
        raise AttributeError(name)
    value = getattr(_moved, name)
    warnings.warn(f"{name} moved: import it from kafkatest.jobs", DeprecationWarning, stacklevel=2)
    return value
