"""Stopping a Spark Connect session: no round trip that the release itself does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafkatest.spark import session as spark_session_module
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


def test_stopping_a_connect_session_leaves_the_local_sessions_scratch_space(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scratch space (spark.local.dir, the warehouse) is the local Spark's: stopping
    a Connect session of the same process must not remove it under that Spark (CI saw
    the shared session's block manager directory vanish mid-run)."""
    scratch = tmp_path / "kafkatest-spark-scratch"
    (scratch / "local").mkdir(parents=True)
    monkeypatch.setattr(spark_session_module, "_scratch", scratch)
    monkeypatch.setattr(spark_session_module, "_connect_server", None)
    stop_spark_session(_ConnectSession(releases=True))  # type: ignore[arg-type]
    assert (scratch / "local").is_dir()
    assert spark_session_module._scratch == scratch
