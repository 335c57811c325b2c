"""Find a job function from ``module:function`` or ``path/to/file.py:function``."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def load_job(spec: str) -> Callable[..., Any]:
    """The callable named by `spec`; a file path is imported under its stem."""
    target, sep, name = spec.rpartition(":")
    if not sep or not target or not name:
        raise ValueError(f"job {spec!r}: give module:function or path/to/file.py:function")
    if target.endswith(".py") or "/" in target:
        path = Path(target).resolve()
        module_name = f"kafkatest_job_{path.stem}"
        loaded = importlib.util.spec_from_file_location(module_name, path)
        if loaded is None or loaded.loader is None:
            raise ValueError(f"job {spec!r}: cannot import {path}")
        module = importlib.util.module_from_spec(loaded)
        sys.modules[module_name] = module
        loaded.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    job = getattr(module, name, None)
    if not callable(job):
        raise ValueError(f"job {spec!r}: {target} has no function {name!r}")
    return job
