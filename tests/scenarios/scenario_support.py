"""Shared pieces of the scenario tests: quick-failing source options and a checked run."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from kafkatest import Broker
from kafkatest.scenarios import Scenario, ScenarioResult, run_scenario
from kafkatest.spark.errors import DATA_LOSS

__all__ = ["DATA_LOSS", "QUICK", "checked_run", "fail_on_data_loss"]

REPORTS = Path(os.environ.get("KAFKATEST_REPORTS_DIR", "kafkatest-reports"))

#: A data-loss failure must arrive in seconds, not after Spark's 120 s default poll.
#: `minOffsetsPerTrigger` holds the next micro-batch back until a fault's last step
#: seeds the release records, so Spark never sees a half-applied fault: no race.
QUICK = {
    "trigger": "200 milliseconds",
    "kafkaConsumer.pollTimeoutMs": "5000",
    "fetchOffset.retryIntervalMs": "100",
    "minOffsetsPerTrigger": "20",
    "maxTriggerDelay": "10m",
}


def checked_run(
    scenario: Scenario, broker: Broker, spark: object, checkpoint: Path
) -> ScenarioResult:
    """Run `scenario`; when an expectation fails, save it for ``kafkatest repro`` and fail."""
    result = run_scenario(scenario, broker, spark, checkpoint)  # type: ignore[arg-type]
    if not result.ok:
        slug = re.sub(r"[^A-Za-z0-9.-]+", "-", scenario.name)
        result.saved_to = str(scenario.save(REPORTS / f"{slug}-{broker.backend}.yaml"))
        pytest.fail(result.text(), pytrace=False)
    return result


def fail_on_data_loss(value: str) -> dict[str, str]:
    return {**QUICK, "failOnDataLoss": value}
