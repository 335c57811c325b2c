"""Spark's error conditions (``KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE``) of a failure.

A failed streaming query surfaces as ``STREAM_FAILED``; the condition that says
why (the connector's data-loss reason) sits on a JVM cause further down, which
the Python exception's text does not name. Scenarios match on both.

Spark 3.5's connector has no ``KAFKA_DATA_LOSS`` condition: it throws an
IllegalStateException whose message alone says which data loss it found, in other
words than 4.x's. `DATA_LOSS_WORDING` holds both lines' words for each reason (from
the connector's own source: 4.x ``error/kafka-error-conditions.json``; 3.5
``KafkaOffsetReaderAdmin`` and ``KafkaDataConsumer``), so one expectation,
``KAFKA_DATA_LOSS.<reason>``, is judged on either.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MAX_CAUSES = 10

#: Spark's own words in every data-loss failure: 4.x's KAFKA_DATA_LOSS message, and
#: the instruction 3.5 appends to its IllegalStateException.
DATA_LOSS = "Some data may have been lost because they are not available in Kafka any more"
DATA_LOSS_CONDITION = "KAFKA_DATA_LOSS"


@dataclass(frozen=True)
class DataLossWording:
    """How one data-loss reason shows in a failed query on one Spark line."""

    #: Any of these, in the error's text or its conditions, names the reason.
    names: tuple[str, ...]
    #: The reason's message, its offsets as ``{start}`` and ``{end}``.
    message: str


def _spark4(reason: str, message: str) -> DataLossWording:
    return DataLossWording((f"{DATA_LOSS_CONDITION}.{reason}",), message)


#: Data-loss reasons by Spark major version. Spark 3.5 says COULD_NOT_READ_OFFSET_RANGE
#: as "Cannot fetch offset <start>" when the offset is out of range (deleted, aged
#: out, past the log end), and "Cannot fetch records in [<start>, <first found>)"
#: when a fetch skipped over it; its message names no end of the task's range.
DATA_LOSS_WORDING: dict[int, dict[str, DataLossWording]] = {
    4: {
        "INITIAL_OFFSET_NOT_FOUND_FOR_PARTITIONS": _spark4(
            "INITIAL_OFFSET_NOT_FOUND_FOR_PARTITIONS", "Cannot find initial offsets for partitions"
        ),
        "ADDED_PARTITION_DOES_NOT_START_FROM_OFFSET_ZERO": _spark4(
            "ADDED_PARTITION_DOES_NOT_START_FROM_OFFSET_ZERO", "starts from {start} instead of 0."
        ),
        "PARTITIONS_DELETED": _spark4("PARTITIONS_DELETED", " have been deleted."),
        "PARTITION_OFFSET_CHANGED": _spark4(
            "PARTITION_OFFSET_CHANGED", " offset was changed from {start} to {end}."
        ),
        "COULD_NOT_READ_OFFSET_RANGE": _spark4(
            "COULD_NOT_READ_OFFSET_RANGE", "Could not read records in offset [{start}, {end})"
        ),
    },
    3: {
        "INITIAL_OFFSET_NOT_FOUND_FOR_PARTITIONS": DataLossWording(
            ("Cannot find earliest offsets of ",), "Cannot find earliest offsets of "
        ),
        "ADDED_PARTITION_DOES_NOT_START_FROM_OFFSET_ZERO": DataLossWording(
            (" instead of 0. Some data may have been missed",),
            "starts from {start} instead of 0. Some data may have been missed",
        ),
        "PARTITIONS_DELETED": DataLossWording(
            (" are gone. Some data may have been missed",), " are gone."
        ),
        "PARTITION_OFFSET_CHANGED": DataLossWording(
            ("'s offset was changed from ",), "'s offset was changed from {start} to {end},"
        ),
        "COULD_NOT_READ_OFFSET_RANGE": DataLossWording(
            ("Cannot fetch offset ", "Cannot fetch records in ["),
            "Cannot fetch offset {start} (",
        ),
    },
}


@functools.lru_cache(maxsize=1)
def spark_major() -> int:
    """Major version of the installed PySpark (the Spark that runs the jobs)."""
    import pyspark

    return int(pyspark.__version__.split(".")[0])


def _wording(major: int | None) -> dict[str, DataLossWording]:
    major = spark_major() if major is None else major
    # A later line than this table knows speaks as the newest it knows.
    return DATA_LOSS_WORDING.get(major) or DATA_LOSS_WORDING[max(DATA_LOSS_WORDING)]


def data_loss_wording(reason: str, major: int | None = None) -> DataLossWording:
    """How the Spark line `major` (default: the installed one) words data-loss `reason`."""
    return _wording(major)[reason]


def data_loss_reason(condition: str) -> str | None:
    """``KAFKA_DATA_LOSS.<reason>`` -> ``<reason>``; None for anything else."""
    prefix = f"{DATA_LOSS_CONDITION}."
    return condition[len(prefix) :] if condition.startswith(prefix) else None


def data_loss_reasons(
    error: str, conditions: Sequence[str] = (), major: int | None = None
) -> list[str]:
    """The data-loss reasons a failure names, in Spark 4's terms, on the given Spark line."""
    said = "\n".join([error, *conditions])
    return [
        reason
        for reason, wording in _wording(major).items()
        if any(name in said for name in wording.names)
    ]


def data_loss_message(reason: str, major: int | None = None, **offsets: int) -> str:
    """What Spark's message for `reason` says with these offsets (``start``, ``end``)."""
    return data_loss_wording(reason, major).message.format(**offsets)


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
