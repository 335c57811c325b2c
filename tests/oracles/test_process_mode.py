"""The oracles with the job in its own process: the crash window holds there too."""

from __future__ import annotations

import pytest
from oracle_jobs import PAYMENTS, append_files
from pyspark.sql import SparkSession

from kafkatest.brokers.base import Broker
from kafkatest.oracles import OracleAssertionError, assert_restart_invariant


@pytest.mark.kafka_backends("emulator")
def test_a_job_in_its_own_process_replays_the_batch_it_died_in(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    with pytest.raises(OracleAssertionError) as caught:
        assert_restart_invariant(
            append_files,
            PAYMENTS,
            spark=spark,  # reads the directory sink back; the job has its own session
            broker=kafka_broker,
            stops=("crash_before_commit:1",),
            max_offsets_per_trigger=3,
            sink="path",
            process=True,
        )

    uninterrupted, crashed = caught.value.report.runs
    assert len(crashed.rows) > len(uninterrupted.rows) == 10
    assert "replaying batch 1" in crashed.legs[0]
