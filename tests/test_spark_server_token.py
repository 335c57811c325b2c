"""The warm server's pre-shared key (Spark Connect 4.0+): clients get it from the state
file, which only its owner can read; people are shown the address without it.

The server refusing a client without it is shown on every line by
tests/test_spark_server_lines.py (a Spark start); these are the quick parts."""

from __future__ import annotations

import json
import stat
from dataclasses import asdict
from pathlib import Path

import pytest

from kafkatest.spark import server
from kafkatest.spark.server import ServerState, checks_tokens


def test_a_server_with_a_token_is_reached_on_localhost_with_it() -> None:
    state = ServerState(1, 15002, "log", "4.2.1", token="s3cret")
    assert state.remote == "sc://localhost:15002/;token=s3cret"
    # what the CLI and the run's header print
    assert state.address == "sc://localhost:15002"
    assert "s3cret" not in repr(state)


def test_a_server_without_a_token_is_reached_on_loopback() -> None:
    state = ServerState(1, 15002, "log", "3.5.7")
    assert state.remote == state.address == "sc://127.0.0.1:15002"


@pytest.mark.parametrize(
    ("version", "checks"), [("3.5.7", False), ("4.0.0", True), ("4.2.1", True), ("5.0.0", True)]
)
def test_spark_connect_checks_tokens_from_4_0(version: str, checks: bool) -> None:
    assert checks_tokens(version) is checks


def test_the_state_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "spark-server.json"
    path.write_text("{}")
    path.chmod(0o644)  # an earlier, public file is replaced, not reused
    state = ServerState(1, 15002, "log", "4.2.1", token="s3cret")
    server._write_private(path, json.dumps(asdict(state)))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert server._recorded(path) == state
    assert [p.name for p in tmp_path.iterdir()] == ["spark-server.json"]


def test_one_start_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs finding no server at once (xdist workers under `spark_server = auto`):
    the second waits for the first's start, then finds its server."""
    import threading

    monkeypatch.setenv("KAFKATEST_SPARK_SERVER_STATE", str(tmp_path / "spark-server.json"))
    events: list[str] = []
    inside = threading.Event()

    def first() -> None:
        with server._one_start_at_a_time():
            inside.set()
            events.append("first in")
            threading.Event().wait(0.3)
            events.append("first out")

    thread = threading.Thread(target=first)
    thread.start()
    inside.wait(5)
    with server._one_start_at_a_time():
        events.append("second in")
    thread.join()
    assert events == ["first in", "first out", "second in"]
