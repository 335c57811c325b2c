"""Delivery assertions (at-least-once, exactly-once, no-loss, expected loss, order),
`assert_latency` for per-record latency (Real-Time Mode), and `assert_query_failed` for
the reason a query failed.

Each returns the `DeliveryReport` when the guarantee holds and raises
`DeliveryAssertionError` (an `AssertionError` carrying the report) when not.
"""

from kafkatest.assertions.delivery import (
    assert_at_least_once,
    assert_exactly_once,
    assert_expected_loss,
    assert_no_loss,
    assert_order_per_key,
    delivery_report,
)
from kafkatest.assertions.frames import assert_frames_equal
from kafkatest.assertions.latency import (
    LatencyAssertionError,
    LatencyReport,
    assert_latency,
    latency_report,
)
from kafkatest.assertions.query_failure import QueryFailure, assert_query_failed, query_failure
from kafkatest.assertions.report import DeliveryAssertionError, DeliveryReport

__all__ = [
    "DeliveryAssertionError",
    "DeliveryReport",
    "LatencyAssertionError",
    "LatencyReport",
    "QueryFailure",
    "assert_at_least_once",
    "assert_exactly_once",
    "assert_expected_loss",
    "assert_frames_equal",
    "assert_latency",
    "assert_no_loss",
    "assert_order_per_key",
    "assert_query_failed",
    "delivery_report",
    "latency_report",
    "query_failure",
]
