"""Spark's error conditions (``KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE``) of a failure.

A failed streaming query surfaces as ``STREAM_FAILED``; the condition that says
why (the connector's data-loss reason) sits on a JVM cause further down, which
the Python exception's text does not name. Scenarios match on both.
"""

from __future__ import annotations

import contextlib
from typing import Any

MAX_CAUSES = 10


def error_conditions(exc: BaseException) -> list[str]:
    """Error conditions of `exc` and of its JVM causes, outermost first."""
    found: list[str] = []
    _add(found, exc)
    # PySpark's own exceptions keep the JVM throwable as `_origin`; a raw
    # Py4JJavaError (e.g. from DataFrameWriter.save) as `java_exception`.
    throwable: Any = getattr(exc, "_origin", None) or getattr(exc, "java_exception", None)
    for _ in range(MAX_CAUSES):
        if throwable is None:
            break
        _add(found, throwable)
        with contextlib.suppress(Exception):
            throwable = throwable.getCause()
            continue
        break
    return found


def _add(found: list[str], error: Any) -> None:
    for getter in ("getCondition", "getErrorClass"):
        with contextlib.suppress(Exception):
            condition = getattr(error, getter)()
            if condition and str(condition) not in found:
                found.append(str(condition))
            return
