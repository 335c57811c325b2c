"""Waiting on the broker: polling until it agrees, and admin futures turned into errors.

Every helper that changes the cluster waits for it to agree before returning, so
tests never race the broker; this is the one way they all wait, and the one way
an admin call's failure reaches a test (a `BrokerError` naming what failed).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from confluent_kafka import KafkaException

from kafkatest.errors import BrokerError

DEFAULT_TIMEOUT_S = 30.0
T = TypeVar("T")


def wait_until(
    condition: Callable[[], bool], timeout_s: float, what: str, interval_s: float = 0.05
) -> None:
    """Poll `condition` until true; raise BrokerError naming `what` on time-out."""
    deadline = time.monotonic() + timeout_s
    while True:
        if condition():
            return
        if time.monotonic() > deadline:
            raise BrokerError(f"timed out after {timeout_s:.0f}s waiting until {what}")
        time.sleep(interval_s)


def retry(
    attempt: Callable[[], T],
    retried: tuple[type[Exception], ...],
    timeout_s: float,
    interval_s: float,
    give_up: Callable[[Exception], Exception],
) -> T:
    """`attempt()`'s result, trying again every `interval_s` while it raises one of
    `retried`; past `timeout_s`, ``give_up(the last error)`` is raised instead, caused by
    what caused that error, if anything (what the broker has not agreed to yet, such as
    a login it does not accept yet or a partition whose leader is still settling)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return attempt()
        except retried as exc:
            if time.monotonic() > deadline:
                raise give_up(exc) from exc.__cause__
            time.sleep(interval_s)


def admin_result(future: Any, what: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> Any:
    """The admin call's result; its failure as a BrokerError saying what failed."""
    try:
        return future.result(timeout=timeout_s)
    except KafkaException as exc:
        raise BrokerError(f"{what} failed: {exc.args[0] if exc.args else exc}") from exc
