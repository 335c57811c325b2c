"""Waiting for streaming queries without ever hanging a test."""

from __future__ import annotations

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
    # PySpark takes fractional seconds (it sends milliseconds); its stub says int.
    finished = query.awaitTermination(cast(int, timeout_s))
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
