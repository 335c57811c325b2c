"""Consumer groups on the emulator, driven by real clients.

confluent-kafka (librdkafka), kafka-python and aiokafka each run the classic
group protocol their own way; these tests are what says the coordinator is
wire-compatible.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from confluent_kafka import (
    Consumer,
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    TopicPartition,
)

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.emulator.state.internal_topics import group_coordinator
from kafkatest.jars.maven import resolve
from tests.emulator.groups_conftest_helpers import (
    PYTHON_CLIENT_GROUP_CONFIG,
    eventually,
    group_consumer,
    poll_values,
    seed,
    seeded_values,
    three_brokers,
    unique,
)

__all__ = ["three_brokers"]

JAVA_DIR = Path(__file__).parent / "java"
#: The kafka-clients version Spark 4.x ships with its Kafka connector.
SPARK_KAFKA_CLIENTS = "3.9.0"


def test_confluent_subscribe_consume_commit(emulator: EmulatorBroker) -> None:
    topic, group = unique("orders"), unique("readers")
    seed(emulator, topic, partitions=3, per_partition=4)
    consumer = group_consumer(emulator, group)
    try:
        consumer.subscribe([topic])
        values = poll_values(consumer, 12)
        assert sorted(values) == seeded_values(3, 4)
        consumer.commit(asynchronous=False)
        committed = consumer.committed([TopicPartition(topic, p) for p in range(3)], timeout=10)
        assert [(tp.partition, tp.offset) for tp in committed] == [(0, 4), (1, 4), (2, 4)]
    finally:
        consumer.close()


def _owned(consumer: Consumer) -> set[int]:
    return {tp.partition for tp in consumer.assignment()}


def _split_evenly(first: Consumer, second: Consumer, partitions: int) -> bool:
    """Both members polled (so they take part in rebalances) and own half each."""
    first.poll(0.05)
    second.poll(0.05)
    a, b = _owned(first), _owned(second)
    return len(a) == len(b) == partitions // 2 and a | b == set(range(partitions))


def test_confluent_rebalance_between_two_members(emulator: EmulatorBroker) -> None:
    topic, group = unique("events"), unique("pair")
    seed(emulator, topic, partitions=4, per_partition=1)
    first, second = group_consumer(emulator, group), group_consumer(emulator, group)
    try:
        first.subscribe([topic])
        eventually(
            lambda: bool(first.poll(0.05) or _owned(first) == {0, 1, 2, 3}), "first owns all"
        )
        second.subscribe([topic])

        eventually(lambda: _split_evenly(first, second, 4), "both members own two partitions each")
        second.close()

        def first_owns_all() -> bool:
            first.poll(0.05)
            return _owned(first) == {0, 1, 2, 3}

        eventually(first_owns_all, "the remaining member owns every partition")
    finally:
        first.close()


def test_confluent_committed_offsets_survive_a_restart(emulator: EmulatorBroker) -> None:
    topic, group = unique("ledger"), unique("resume")
    seed(emulator, topic, partitions=1, per_partition=10)
    consumer = group_consumer(emulator, group)
    consumer.subscribe([topic])
    first_half = poll_values(consumer, 5)
    consumer.commit(offsets=[TopicPartition(topic, 0, 5)], asynchronous=False)
    consumer.close()

    restarted = group_consumer(emulator, group)
    try:
        restarted.subscribe([topic])
        rest = poll_values(restarted, 5)
        assert first_half == [f"0-{i}" for i in range(5)]
        assert rest == [f"0-{i}" for i in range(5, 10)]
    finally:
        restarted.close()


def test_confluent_assign_only_consumer_commits_without_joining(
    emulator: EmulatorBroker,
) -> None:
    topic, group = unique("spark-like"), unique("assigned")
    seed(emulator, topic, partitions=2, per_partition=3)
    consumer = group_consumer(emulator, group)
    try:
        consumer.assign([TopicPartition(topic, 0, 0), TopicPartition(topic, 1, 0)])
        poll_values(consumer, 6)
        consumer.commit(
            offsets=[TopicPartition(topic, 0, 3, "meta"), TopicPartition(topic, 1, 2)],
            asynchronous=False,
        )
        committed = consumer.committed([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        assert [(tp.offset, tp.metadata) for tp in committed] == [(3, "meta"), (2, None)]
    finally:
        consumer.close()


def test_kafka_python_group_consumer(emulator: EmulatorBroker) -> None:
    from kafka import KafkaConsumer, TopicPartition as KafkaPythonPartition

    topic, group = unique("kp"), unique("kp-group")
    seed(emulator, topic, partitions=2, per_partition=3)
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=emulator.bootstrap_servers,
        group_id=group,
        **PYTHON_CLIENT_GROUP_CONFIG,
    )
    try:
        # kafka-python does not wait for metadata before its first join (KAFKA-3949 is
        # handled for pattern subscriptions only): on a loaded machine its leader can
        # assign from empty metadata and churn through rebalances. A real application
        # asks for the topic's partitions first, as this does.
        assert consumer.partitions_for_topic(topic) == {0, 1}
        values: list[str] = []

        def all_read() -> bool:
            for batch in consumer.poll(timeout_ms=100).values():
                values.extend(m.value.decode() for m in batch)
            return len(values) >= 6

        eventually(all_read, "kafka-python read every record")
        assert sorted(values) == seeded_values(2, 3)
        consumer.commit()
        assert consumer.committed(KafkaPythonPartition(topic, 0)) == 3
        assert consumer.committed(KafkaPythonPartition(topic, 1)) == 3
    finally:
        consumer.close()
    described = emulator.admin().describe_consumer_groups([group])[group].result(timeout=10)
    assert described.state == ConsumerGroupState.EMPTY, "closing left the group"


def test_aiokafka_group_consumer(emulator: EmulatorBroker) -> None:
    from aiokafka import AIOKafkaConsumer
    from aiokafka.structs import TopicPartition as AioPartition

    topic, group = unique("aio"), unique("aio-group")
    seed(emulator, topic, partitions=2, per_partition=3)

    async def consume() -> tuple[list[str], list[int | None]]:
        consumer = AIOKafkaConsumer(
            topic,
            bootstrap_servers=emulator.bootstrap_servers,
            group_id=group,
            **PYTHON_CLIENT_GROUP_CONFIG,
        )
        await consumer.start()
        try:
            values: list[str] = []
            async with asyncio.timeout(20):
                while len(values) < 6:
                    for batch in (await consumer.getmany(timeout_ms=100)).values():
                        values.extend(m.value.decode() for m in batch)
            await consumer.commit()
            committed = [await consumer.committed(AioPartition(topic, p)) for p in range(2)]
            return values, committed
        finally:
            await consumer.stop()

    values, committed = asyncio.run(consume())
    assert sorted(values) == seeded_values(2, 3)
    assert committed == [3, 3]


def test_confluent_admin_group_operations(emulator: EmulatorBroker) -> None:
    topic, group = unique("admin"), unique("admin-group")
    seed(emulator, topic, partitions=2, per_partition=2)
    admin = emulator.admin()
    consumer = group_consumer(emulator, group, **{"client.id": "admin-test"})
    try:
        consumer.subscribe([topic])
        poll_values(consumer, 4)
        consumer.commit(asynchronous=False)

        listed = admin.list_consumer_groups().result(timeout=10)
        states = {g.group_id: g.state for g in listed.valid}
        assert states.get(group) == ConsumerGroupState.STABLE

        described = admin.describe_consumer_groups([group])[group].result(timeout=10)
        assert described.state == ConsumerGroupState.STABLE
        assert not described.is_simple_consumer_group
        assert described.partition_assignor in ("range", "roundrobin")
        (member,) = described.members
        assert member.client_id == "admin-test"
        assert member.host == "/127.0.0.1"
        assigned = {(tp.topic, tp.partition) for tp in member.assignment.topic_partitions}
        assert assigned == {(topic, 0), (topic, 1)}

        refused = admin.delete_consumer_groups([group])[group]
        with pytest.raises(KafkaException) as busy:
            refused.result(timeout=10)
        assert busy.value.args[0].code() == KafkaError.NON_EMPTY_GROUP
    finally:
        consumer.close()

    request = ConsumerGroupTopicPartitions(group)
    offsets = admin.list_consumer_group_offsets([request])[group].result(timeout=10)
    assert sorted((tp.topic, tp.partition, tp.offset) for tp in offsets.topic_partitions) == [
        (topic, 0, 2),
        (topic, 1, 2),
    ]
    admin.delete_consumer_groups([group])[group].result(timeout=10)
    remaining = admin.list_consumer_groups().result(timeout=10)
    assert group not in {g.group_id for g in remaining.valid}
    gone = admin.describe_consumer_groups([group])[group].result(timeout=10)
    assert gone.state in (ConsumerGroupState.DEAD, ConsumerGroupState.UNKNOWN)


def test_groups_on_a_cluster_are_served_by_their_coordinator(
    three_brokers: EmulatorBroker,
) -> None:
    topic = unique("spread")
    seed(three_brokers, topic, partitions=3, per_partition=2)
    groups = _groups_on_every_broker(three_brokers)
    for group in groups:
        consumer = group_consumer(three_brokers, group)
        try:
            consumer.subscribe([topic])
            poll_values(consumer, 6)
            consumer.commit(asynchronous=False)
            committed = consumer.committed([TopicPartition(topic, p) for p in range(3)], timeout=10)
            assert [tp.offset for tp in committed] == [2, 2, 2]
        finally:
            consumer.close()
    listed = three_brokers.admin().list_consumer_groups().result(timeout=10)
    assert set(groups) <= {g.group_id for g in listed.valid}


def _groups_on_every_broker(cluster: EmulatorBroker) -> list[str]:
    """One new group id per broker, each coordinated by that broker (random ids left
    all four groups on one coordinator about one run in 27)."""
    by_coordinator: dict[int, str] = {}
    while len(by_coordinator) < len(cluster.broker_ids):
        group = unique("g")
        coordinator = cluster.call(lambda g=group: group_coordinator(cluster.state, g))
        by_coordinator.setdefault(coordinator, group)
    return list(by_coordinator.values())


def test_confluent_cooperative_sticky_rebalance(emulator: EmulatorBroker) -> None:
    topic, group = unique("coop"), unique("coop-group")
    seed(emulator, topic, partitions=4, per_partition=1)
    settings = {"partition.assignment.strategy": "cooperative-sticky"}
    first = group_consumer(emulator, group, **settings)
    second = group_consumer(emulator, group, **settings)
    try:
        first.subscribe([topic])
        eventually(
            lambda: bool(first.poll(0.05)) or _owned(first) == {0, 1, 2, 3}, "first owns all"
        )
        second.subscribe([topic])

        eventually(
            lambda: _split_evenly(first, second, 4),
            "incremental rebalance moved two partitions to the newcomer",
        )
    finally:
        second.close()
        first.close()


def test_confluent_static_member_rejoins_with_its_assignment(emulator: EmulatorBroker) -> None:
    topic, group = unique("static"), unique("static-group")
    seed(emulator, topic, partitions=2, per_partition=1)
    settings = {"group.instance.id": "instance-1"}
    consumer = group_consumer(emulator, group, **settings)
    consumer.subscribe([topic])
    poll_values(consumer, 2)
    before = emulator.admin().describe_consumer_groups([group])[group].result(timeout=10)
    consumer.close()  # a static member does not leave: the group stays Stable

    after_close = emulator.admin().describe_consumer_groups([group])[group].result(timeout=10)
    assert after_close.state == ConsumerGroupState.STABLE
    restarted = group_consumer(emulator, group, **settings)
    try:
        restarted.subscribe([topic])
        eventually(lambda: bool(restarted.poll(0.05)) or _owned(restarted) == {0, 1}, "reassigned")
        now = emulator.admin().describe_consumer_groups([group])[group].result(timeout=10)
        (old_member,), (new_member,) = before.members, now.members
        assert new_member.group_instance_id == old_member.group_instance_id == "instance-1"
        assert new_member.member_id != old_member.member_id
    finally:
        restarted.close()


def test_java_group_consumer(emulator: EmulatorBroker) -> None:
    """Spark's own client: JoinGroup v9, SyncGroup v5, OffsetCommit v9 and the Admin."""
    java = shutil.which("java")
    if java is None:
        pytest.skip("no java on PATH")
    jars = resolve([f"org.apache.kafka:kafka-clients:{SPARK_KAFKA_CLIENTS}"], quiet=True)
    topic, group = unique("java"), unique("java-group")
    seed(emulator, topic, partitions=2, per_partition=3)
    run = subprocess.run(
        [
            java,
            "-cp",
            os.pathsep.join(str(j) for j in jars),
            str(JAVA_DIR / "GroupConsumer.java"),
            emulator.bootstrap_servers,
            topic,
            group,
            "6",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    records = sorted(line.split()[2] for line in lines if line.startswith("record "))
    assert records == seeded_values(2, 3)
    assert [line for line in lines if not line.startswith("record ")] == [
        "committed 0 3",
        "committed 1 3",
        "state Stable",
        "members 1",
    ]


def test_deleting_a_topic_drops_its_committed_offsets(emulator: EmulatorBroker) -> None:
    kept, dropped, group = unique("kept"), unique("dropped"), unique("two-topics")
    seed(emulator, kept, partitions=1, per_partition=1)
    seed(emulator, dropped, partitions=1, per_partition=1)
    consumer = group_consumer(emulator, group)
    try:
        consumer.assign([TopicPartition(kept, 0, 0), TopicPartition(dropped, 0, 0)])
        poll_values(consumer, 2)
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    emulator.delete_topic(dropped)
    request = ConsumerGroupTopicPartitions(group)
    offsets = emulator.admin().list_consumer_group_offsets([request])[group].result(timeout=10)
    assert [(tp.topic, tp.offset) for tp in offsets.topic_partitions] == [(kept, 1)]


def test_admin_alters_offsets_that_a_new_member_resumes_from(emulator: EmulatorBroker) -> None:
    topic, group = unique("altered"), unique("altered-group")
    seed(emulator, topic, partitions=1, per_partition=5)
    altered = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 3)])
    emulator.admin().alter_consumer_group_offsets([altered])[group].result(timeout=10)
    consumer = group_consumer(emulator, group)
    try:
        consumer.subscribe([topic])
        assert poll_values(consumer, 2) == ["0-3", "0-4"]
    finally:
        consumer.close()
