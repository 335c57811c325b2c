"""``kafkatest repro FILE``: replay a saved scenario on a broker of its own.

Exit status 0 when the scenario's expectations held, 1 when not; the printed
report says what Spark did and what reached the sink either way.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from kafkatest.brokers.registry import start_broker
from kafkatest.scenarios.runner import run_scenario
from kafkatest.scenarios.spec import load_scenario


def run_repro(path: str, backend: str | None = None, bootstrap: str | None = None) -> int:
    """Run the scenario in `path` on a fresh broker and print its report."""
    scenario = load_scenario(path)
    spark = None
    broker = start_broker(backend, bootstrap)
    try:
        if scenario.mode != "process":
            from kafkatest.spark.session import kafka_spark_session

            spark = kafka_spark_session(app_name=f"kafkatest-repro-{scenario.name}")
        with tempfile.TemporaryDirectory(prefix="kafkatest-repro-") as scratch:
            result = run_scenario(scenario, broker, spark, Path(scratch) / "checkpoint")
        print(result.text())
        return 0 if result.ok else 1
    finally:
        if spark is not None:
            from kafkatest.spark.session import stop_spark_session

            stop_spark_session(spark)
        broker.close()
