"""What a Spark job meets when its principal's ACLs are not enough, on every backend.

The job is the sample job (`fixtures/jobs/orders_enrichment.py`) run on PLAINTEXT,
so its principal is User:ANONYMOUS; kafkatest's own seeding and reading act as a
super user. Each test is a row of the table in docs/how-to/acls.md: the exception
Spark ends in (or that it succeeds), as real Kafka 4.1 and the emulator give it.
"""

from __future__ import annotations

import time
import uuid

import orders_enrichment as job
import pytest

from kafkatest import Broker, Record
from kafkatest.brokers.acl_client import ANONYMOUS

pytestmark = pytest.mark.spark

T0 = (int(time.time()) - 3600) * 1000
SINK_DENIED = "org.apache.kafka.common.errors.TopicAuthorizationException: Not authorized to access topics: [{sink}]"


def _topics(acl_broker: Broker, hint: str) -> tuple[str, str]:
    suffix = uuid.uuid4().hex[:6]
    source, sink = f"acl-{hint}-in-{suffix}", f"acl-{hint}-out-{suffix}"
    acl_broker.create_topic(source, partitions=2)
    acl_broker.create_topic(sink)
    acl_broker.produce(
        [
            Record.make(
                source,
                {"order_id": f"o-{i}", "customer": "c", "amount": 10.0, "currency": "USD"},
                key=f"o-{i}",
                partition=i % 2,
                timestamp_ms=T0 + i,
            )
            for i in range(4)
        ]
    )
    return source, sink


def _run(spark, acl_broker: Broker, source: str, sink: str, **kafka: str) -> str:
    """The job's failure text, or "ok" when it wrote every record."""
    options = {f"kafka.{k.replace('_', '.')}": v for k, v in kafka.items()}
    try:
        job.run_batch(spark, acl_broker.bootstrap_servers, source, sink, kafka_options=options)
    except Exception as exc:
        return str(exc)
    assert sorted(r.key_text() for r in acl_broker.consume(sink)) == [f"o-{i}" for i in range(4)]
    return "ok"


def test_a_job_without_read_on_its_topic_fails_in_the_driver(spark, acl_broker: Broker) -> None:
    source, sink = _topics(acl_broker, "no-read")
    acl_broker.allow(ANONYMOUS, "WRITE", topic=sink)
    failure = _run(spark, acl_broker, source, sink)
    # The driver's admin client describes the subscribed topic first.
    assert (
        "org.apache.kafka.common.errors.TopicAuthorizationException: Topic authorization failed."
        in failure
    )
    assert "ConsumerStrategy.retrieveAllPartitions" in failure


def test_a_job_with_kafka_group_id_needs_no_read_on_that_group(spark, acl_broker: Broker) -> None:
    """Spark assigns partitions and seeks to its own offsets: its consumers never join
    or commit to the group, so group ACLs do not matter (Kafka 4.1 and Spark 4)."""
    source, sink = _topics(acl_broker, "group")
    acl_broker.allow(ANONYMOUS, "READ", topic=source)
    acl_broker.allow(ANONYMOUS, "WRITE", topic=sink)
    assert _run(spark, acl_broker, source, sink, group_id="job-group") == "ok"


def test_a_sink_without_write_fails_its_tasks(spark, acl_broker: Broker) -> None:
    source, sink = _topics(acl_broker, "no-write")
    acl_broker.allow(ANONYMOUS, "READ", topic=source)
    failure = _run(spark, acl_broker, source, sink)
    assert "Job aborted due to stage failure" in failure
    assert SINK_DENIED.format(sink=sink) in failure


def test_a_sink_without_write_and_without_idempotence_fails_the_same_way(
    spark, acl_broker: Broker
) -> None:
    source, sink = _topics(acl_broker, "no-write-plain")
    acl_broker.allow(ANONYMOUS, "READ", topic=source)
    failure = _run(spark, acl_broker, source, sink, enable_idempotence="false")
    assert "Job aborted due to stage failure" in failure
    assert SINK_DENIED.format(sink=sink) in failure


def test_a_sink_with_write_but_no_idempotent_write_succeeds(spark, acl_broker: Broker) -> None:
    """The Databricks document's case: kafka-clients 3.x producers are idempotent by
    default, and brokers before 2.8 refused their InitProducerId without
    IDEMPOTENT_WRITE on the cluster. Since KIP-679 (Kafka 3.0) WRITE on any topic is
    enough, so on Kafka 4.1 the sink just works."""
    source, sink = _topics(acl_broker, "idempotent")
    acl_broker.allow(ANONYMOUS, "READ", topic=source)
    acl_broker.allow(ANONYMOUS, "WRITE", topic=sink)
    assert _run(spark, acl_broker, source, sink) == "ok"
