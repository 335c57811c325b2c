"""Real-Time Mode (PySpark 4.1+): records reach the sink as they come, within a latency
bound; the Kafka sink is at-least-once when the job is killed mid-batch; and a session
short of task slots is refused before the query starts. On the emulator and real Kafka.
"""

from __future__ import annotations

import pytest

from kafkatest import assert_at_least_once, assert_exactly_once, assert_latency, seed
from kafkatest.assertions import DeliveryAssertionError
from kafkatest.errors import SetupError
from kafkatest.jobs import JobProcess
from kafkatest.scenarios.jobs import copy_stream
from kafkatest.sinks import topic_rows
from kafkatest.spark import check_real_time_slots, wait_for_rows
from kafkatest.spark.real_time import supports_real_time

pytestmark = pytest.mark.skipif(
    not supports_real_time(), reason="Real-Time Mode arrived in PySpark 4.1 (CI: 4.2 and 4.3)"
)
#: Batches of 5 minutes: a test's whole run is one batch, so a row in the sink was
#: written as its record came, never at a batch's end (5 s is the shortest allowed).
REAL_TIME = {"trigger": "realTime 5 minutes"}


def test_each_record_reaches_the_sink_as_it_comes(
    spark, kafka_broker, kafka_topic, checkpoint_dir
) -> None:
    source, sink = kafka_topic(partitions=2), kafka_topic(partitions=1)
    check_real_time_slots(spark, kafka_broker, source)  # one task per partition: 2 of 2
    query = copy_stream(
        spark, kafka_broker.bootstrap_servers, source, sink, str(checkpoint_dir), options=REAL_TIME
    )

    def sink_rows() -> list[dict]:
        return topic_rows(kafka_broker, sink)

    # The query's tasks take a while to start: wait for a first record to come through.
    seed(kafka_broker, source, [{"warm-up": True}], id_prefix="warm-up-")
    wait_for_rows(sink_rows, 1, query=query, timeout_s=300)
    orders = seed(kafka_broker, source, [{"order": i} for i in range(50)])
    rows = wait_for_rows(sink_rows, 51, query=query)
    assert query.lastProgress is None  # its first batch has not ended: no offsets committed
    # Per record, from its produce timestamp to its copy's: set the bound your job needs
    # (a few ms to tens of ms on a quiet machine); this CI machine is shared.
    report = assert_latency(orders, rows, p99_ms=30_000)
    assert len(report.latencies) == 50


def test_a_job_killed_mid_batch_writes_the_batch_again(
    kafka_broker, kafka_topic, checkpoint_dir
) -> None:
    source, sink = kafka_topic(partitions=2), kafka_topic(partitions=1)
    orders = seed(kafka_broker, source, [{"order": i} for i in range(20)])

    def sink_rows() -> list[dict]:
        return topic_rows(kafka_broker, sink)

    job = JobProcess(
        "kafkatest.scenarios.jobs:copy_stream",
        kafka_broker.bootstrap_servers,
        source,
        sink,
        checkpoint_dir,
        options=REAL_TIME,
        timeout_s=600,  # the job's own bound: its query never ends by itself
    )
    with job:
        job.start()
        wait_for_rows(sink_rows, 20, timeout_s=300)
        job.kill()  # SIGKILL, its batch still running: Spark committed no offsets for it
        job.start()  # from the same checkpoint: it reads the batch's records again
        rows = wait_for_rows(sink_rows, 40, timeout_s=300)
    report = assert_at_least_once(orders, rows)  # the Kafka sink's promise holds
    assert report.counts()["duplicated"] == 20
    with pytest.raises(DeliveryAssertionError, match="20 duplicated"):
        assert_exactly_once(orders, rows)  # and no more than that


def test_a_session_short_of_task_slots_is_refused_before_the_query_starts(
    spark, kafka_broker, kafka_topic
) -> None:
    source = kafka_topic(partitions=3)
    with pytest.raises(SetupError, match=r"'.+' has 3.*runs 2 at a time.*local\[3\]"):
        check_real_time_slots(spark, kafka_broker, source)
    # A stateful query on Spark 4.3 also holds its shuffle's tasks.
    with pytest.raises(SetupError, match=r"plus 2 shuffle partitions: 3 tasks at once"):
        check_real_time_slots(spark, kafka_broker, kafka_topic(partitions=1), shuffle_partitions=2)
    assert check_real_time_slots(spark, kafka_broker, kafka_topic(partitions=2)) == 2
