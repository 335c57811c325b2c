"""Waiting for streaming queries without ever hanging a test."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, cast

from kafkatest.errors import KafkaTestError

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery


class QueryTimeout(KafkaTestError):
    """A streaming query did not finish in time; it has been stopped."""


def wait_for_query(query: StreamingQuery, timeout_s: float = 120.0) -> None:
    """Wait for a query that ends by itself (Trigger.AvailableNow / once).

    Re-raises the query's own exception if it failed, and stops it and raises
    QueryTimeout if it is still running after `timeout_s`, so a bad option or a
    broker that went away fails the test instead of hanging it.
    """
    try:
        # PySpark takes fractional seconds (it sends milliseconds); its stub says int.
        finished = query.awaitTermination(cast(int, timeout_s))
    except KeyboardInterrupt:
        stop_quietly(query)
        raise
    if not finished:
        progress = query.lastProgress
        query.stop()
        raise QueryTimeout(
            f"streaming query {query.name or query.id} still running after {timeout_s:.0f}s "
            f"and was stopped; last progress: {progress}"
        )
    error = query.exception()
    if error is not None:
        raise error


def stop_quietly(query: StreamingQuery) -> None:
    """Stop `query` after Ctrl-C, and let nothing but the KeyboardInterrupt surface.

    PySpark's SIGINT handler has already cancelled the running jobs, and the py4j
    call the interrupt landed in may have left its connection mid-answer: stopping
    can then fail in py4j, and that traceback must not replace the interrupt (the
    run would end as a failed test instead of an interrupted one).
    """
    with contextlib.suppress(Exception):
        query.stop()
