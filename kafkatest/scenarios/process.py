"""Moved to `kafkatest.jobs` (``from kafkatest.jobs import JobProcess``); this old path
still works, with a DeprecationWarning naming the new one."""

import warnings
from typing import Any

from kafkatest.jobs import process as _moved


def __getattr__(name: str) -> Any:
    value = getattr(_moved, name)
    warnings.warn(
        f"kafkatest.scenarios.process.{name} moved: import it from kafkatest.jobs",
        DeprecationWarning,
        stacklevel=2,
    )
    return value
