"""A run that meets Spark's own failure under load (its Python worker not connecting back
within Spark's fixed 10 s) is run again, and the report says so; the job's own failure is
not retried. Spark cannot be made to time out on demand, so the runner stands in."""

from __future__ import annotations

from typing import Any

import pytest

from kafkatest.oracles.engine import Oracle
from kafkatest.oracles.inputs import Placement
from kafkatest.oracles.options import OracleOptions
from kafkatest.oracles.runs import OracleError, RunResult


class _Broker:
    backend = "emulator"


class _Runner:
    def __init__(self, failures: list[str]) -> None:
        self.failures = failures
        self.calls = 0

    def run(self, name: str, topic: str, limit: Any, stops: Any) -> RunResult:
        self.calls += 1
        if self.failures:
            raise OracleError(f"run {name!r}: the job failed: {self.failures.pop(0)}")
        return RunResult(name, {}, sink="memory_table")

    def close(self) -> None:
        pass


def oracle_with(runner: _Runner) -> Oracle:
    options = OracleOptions(broker=_Broker(), spark=object(), read_sink=lambda sink: [{"n": 1}])  # type: ignore[arg-type]
    oracle = Oracle("test", "m:f", [], options)
    oracle.runner = runner  # type: ignore[assignment]
    oracle.output_mode = "append"
    return oracle


def test_a_worker_that_did_not_connect_back_is_run_again_and_noted() -> None:
    runner = _Runner(["[STREAM_FAILED] ... Python worker failed to connect back."])
    oracle = oracle_with(runner)
    result = oracle.run("one batch", Placement("t", {}), None)
    assert runner.calls == 2 and result.rows == [{"n": 1}]
    assert "was run again" in oracle.report.notes[0]


def test_the_jobs_own_failure_is_not_retried() -> None:
    runner = _Runner(["[USER_RAISED_EXCEPTION] boom"])
    with pytest.raises(OracleError, match="boom"):
        oracle_with(runner).run("one batch", Placement("t", {}), None)
    assert runner.calls == 1


def test_retries_are_bounded() -> None:
    runner = _Runner(["Python worker failed to connect back."] * 5)
    with pytest.raises(OracleError, match="connect back"):
        oracle_with(runner).run("one batch", Placement("t", {}), None)
    assert runner.calls == 3
