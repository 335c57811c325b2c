"""A restart oracle's stop may damage the checkpoint before the job resumes
(``after_batch:2+rewind-to-0``), and the oracle report then says which batches the
resumed query ran again and which input offsets that sent to the sink twice."""

from __future__ import annotations

import pytest
from oracle_jobs import PAYMENTS, dedup_stateful
from pyspark.sql import SparkSession

from kafkatest.brokers.base import Broker
from kafkatest.oracles import OracleAssertionError, StopPoint, assert_restart_invariant

#: The oracles' own logic: the broker only feeds the job. The docs example
#: (test_docs_example.py) and the catch matrix run the oracles on real Kafka too.
pytestmark = pytest.mark.kafka_backends("emulator")


def test_a_rewound_checkpoint_is_named_in_the_oracle_report(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    with pytest.raises(OracleAssertionError) as caught:
        assert_restart_invariant(
            dedup_stateful,
            PAYMENTS,
            spark=spark,
            broker=kafka_broker,
            stops=("after_batch:2+rewind-to-0",),
            max_offsets_per_trigger=3,
            partitions=1,
        )

    _, rewound = caught.value.report.runs
    assert rewound.restart is not None
    assert rewound.restart.replayed_batches == [1, 2]
    assert rewound.restart.records_again == 6
    message = str(caught.value)
    name = "'after_batch:2+rewind-to-0'"
    assert f"{name}: then the checkpoint fault rewind-to-0; removed " in message
    assert (
        f"{name} logs before the fault: offsets 0-2, commits 0-2; after it: offsets 0, commits 0"
        in message
    )
    assert (
        f"{name} batch 1 (replayed) read kt-oracle-" in message
        and "[0] offsets 3-5 had reached the sink before (3 records again); the checkpoint "
        "was rewound to batch 0"
        in message
    ), message
    assert f"{name} batch 3 (new) read kt-oracle-" in message


def test_a_stop_names_only_checkpoint_faults_it_knows() -> None:
    assert StopPoint.parse("crash_before_commit:1+delete-commits").fault == "delete-commits"
    assert str(StopPoint.parse("after_batch:2+rewind-to-0")) == "after_batch:2+rewind-to-0"
    with pytest.raises(ValueError, match="unknown checkpoint fault 'rewind-to-x'"):
        StopPoint.parse("after_batch:2+rewind-to-x")
