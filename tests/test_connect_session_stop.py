"""Stopping a Spark Connect session: no round trip that the release itself does."""

from __future__ import annotations

from typing import Any

from kafkatest.spark.session import stop_spark_session


class _Streams:
    def __init__(self) -> None:
        self.asked = 0

    @property
    def active(self) -> list[Any]:
        self.asked += 1
        return []


class _ConnectSession:
    """What `stop_spark_session` sees of a Spark Connect session (no JVM in this process)."""

    def __init__(self, releases: bool | None) -> None:
        if releases is not None:  # PySpark 3.5's client has no such attribute
            self.release_session_on_close = releases
        self.streams = _Streams()
        self.stopped = False

    @property
    def is_stopped(self) -> bool:
        return self.stopped

    def stop(self) -> None:
        self.stopped = True


def test_a_session_that_releases_itself_is_stopped_without_asking_for_its_queries() -> None:
    # PySpark 4's client releases the session as it stops, and the server stops the
    # session's queries as it releases it: asking for them first cost a round trip.
    session = _ConnectSession(releases=True)
    stop_spark_session(session)  # type: ignore[arg-type]
    assert session.stopped
    assert session.streams.asked == 0


def test_a_session_that_does_not_release_itself_has_its_queries_stopped_first() -> None:
    for releases in (None, False):  # PySpark 3.5's client; release turned off
        session = _ConnectSession(releases=releases)
        stop_spark_session(session)  # type: ignore[arg-type]
        assert session.stopped
        assert session.streams.asked == 1
