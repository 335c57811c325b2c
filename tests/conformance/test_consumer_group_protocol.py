"""KIP-848 consumer groups (``group.protocol=consumer``) as clients see them, on every backend.

Run with ``--kafka-backend=emulator,kafka``. The broker assigns partitions
(ConsumerGroupHeartbeat), so these tests drive librdkafka (2.16, whose consumer
protocol is GA) and Kafka's own Java console consumer and kafka-consumer-groups
tool, and expect real Kafka 4.1's answers. Both backends run with 500 ms consumer
group heartbeats and 10 s sessions (kafkatest's test settings), so groups settle in
a second or two.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import (
    Consumer,
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    ConsumerGroupType,
    Producer,
    TopicPartition,
)

from kafkatest import Broker, Record
from kafkatest.apps.tools import CONSOLE_CONSUMER, CONSUMER_GROUPS, run_kafka_tool, tool_option

SETTLE_S = 60.0

pytestmark = pytest.mark.kafka_min_version(
    "4.0", "KIP-848 consumer groups are generally available from Kafka 4.0 (off in 3.9)"
)


def group_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def eventually(
    check: Callable[[], bool], what: str, pump: Callable[[], None] = lambda: None
) -> None:
    """Poll `check` (calling `pump` between tries) until it holds; fail with `what`."""
    deadline = time.monotonic() + SETTLE_S
    while not check():
        assert time.monotonic() < deadline, f"never: {what}"
        pump()
        time.sleep(0.05)


@pytest.fixture
def consumers(kafka_broker: Broker) -> Iterator[Callable[..., Consumer]]:
    """Makes consumer-protocol librdkafka consumers, closed at the end of the test."""
    made: list[Consumer] = []

    def make(group: str, **overrides: Any) -> Consumer:
        consumer = Consumer(
            {
                "bootstrap.servers": kafka_broker.bootstrap_servers,
                "group.id": group,
                "group.protocol": "consumer",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                **overrides,
            }
        )
        made.append(consumer)
        return consumer

    yield make
    for consumer in made:
        with contextlib.suppress(RuntimeError):  # closed by the test
            consumer.close()


def owned(consumer: Consumer) -> set[int]:
    return {tp.partition for tp in consumer.assignment()}


def read(consumer: Consumer, count: int) -> list[str]:
    values: list[str] = []

    def pump() -> None:
        message = consumer.poll(0.1)
        if message is not None:
            assert message.error() is None, message.error()
            values.append(message.value().decode())

    eventually(lambda: len(values) >= count, f"{count} records (got {values})", pump)
    return values


def describe(broker: Broker, group: str) -> Any:
    return broker.admin().describe_consumer_groups([group])[group].result(timeout=30)


def test_one_consumer_gets_every_partition_and_the_group_is_a_consumer_group(
    kafka_broker: Broker, kafka_topic, consumers
) -> None:
    topic, group = kafka_topic(partitions=3), group_name("kip848-one")
    kafka_broker.produce(Record(topic, f"v{p}".encode(), partition=p) for p in range(3))
    consumer = consumers(group)
    consumer.subscribe([topic])
    assert sorted(read(consumer, 3)) == ["v0", "v1", "v2"]
    assert owned(consumer) == {0, 1, 2}
    consumer.commit(asynchronous=False)

    described = describe(kafka_broker, group)
    assert described.type == ConsumerGroupType.CONSUMER
    assert described.state == ConsumerGroupState.STABLE
    assert described.partition_assignor == "uniform"
    (member,) = described.members
    assert {tp.partition for tp in member.assignment.topic_partitions} == {0, 1, 2}
    listed = kafka_broker.admin().list_consumer_groups().result(timeout=30).valid
    assert [(g.type, g.state) for g in listed if g.group_id == group] == [
        (ConsumerGroupType.CONSUMER, ConsumerGroupState.STABLE)
    ]


def test_java_console_consumer_with_the_consumer_protocol(
    kafka_broker: Broker, kafka_topic
) -> None:
    """Kafka's own Java client (4.1) joins with ConsumerGroupHeartbeat, reads, commits
    (OffsetCommit with its member epoch) and leaves; kafka-consumer-groups then shows
    the committed offsets of the now empty consumer group."""
    topic, group = kafka_topic(partitions=2), group_name("kip848-java")
    kafka_broker.produce(Record(topic, f"v{i}".encode(), partition=i % 2) for i in range(4))
    consumed = run_kafka_tool(
        CONSOLE_CONSUMER,
        [
            "--bootstrap-server", kafka_broker.bootstrap_servers, "--topic", topic,
            "--group", group,
            tool_option(CONSOLE_CONSUMER, "--consumer-property"), "group.protocol=consumer",
            "--from-beginning", "--max-messages", "4", "--timeout-ms", "60000",
        ],
        timeout_s=120,
    )  # fmt: skip
    assert consumed.returncode == 0, consumed.stderr
    assert sorted(consumed.stdout.split()) == ["v0", "v1", "v2", "v3"]
    assert "Processed a total of 4 messages" in consumed.stderr

    described = run_kafka_tool(
        CONSUMER_GROUPS,
        ["--bootstrap-server", kafka_broker.bootstrap_servers, "--describe", "--group", group],
        timeout_s=90,
    )
    assert described.returncode == 0, described.stderr
    assert f"Consumer group '{group}' has no active members." in described.stderr
    rows = [line.split() for line in described.stdout.splitlines() if line.startswith(group)]
    assert sorted((r[2], r[3], r[4]) for r in rows) == [("0", "2", "2"), ("1", "2", "2")]
    state = run_kafka_tool(
        CONSUMER_GROUPS,
        [
            "--bootstrap-server", kafka_broker.bootstrap_servers, "--describe", "--group",
            group, "--state",
        ],
        timeout_s=90,
    )  # fmt: skip
    header, row = [line.split() for line in state.stdout.splitlines() if line.strip()][-2:]
    assert dict(zip(header, row, strict=False))["STATE"] == "Empty"


def test_three_consumers_share_partitions_and_the_rest_take_over_when_one_leaves(
    kafka_broker: Broker, kafka_topic, consumers
) -> None:
    topic, group = kafka_topic(partitions=6), group_name("kip848-share")
    members = [consumers(group) for _ in range(3)]
    for consumer in members:
        consumer.subscribe([topic])

    def pump() -> None:
        for consumer in members:
            consumer.poll(0.05)

    def split_evenly() -> bool:
        shares = [owned(c) for c in members]
        return sorted(len(s) for s in shares) == [2, 2, 2] and set().union(*shares) == set(range(6))

    eventually(split_evenly, "six partitions split 2/2/2", pump)
    described = describe(kafka_broker, group)
    assert described.state == ConsumerGroupState.STABLE
    assert sorted(len(m.assignment.topic_partitions) for m in described.members) == [2, 2, 2]

    leaving = members.pop(0)
    leaving.close()  # a leave heartbeat (epoch -1): its partitions move at once
    eventually(
        lambda: (
            sorted(len(owned(c)) for c in members) == [3, 3]
            and owned(members[0]) | owned(members[1]) == set(range(6))
        ),
        "the two left split all six",
        pump,
    )
    assert len(describe(kafka_broker, group).members) == 2


def test_a_regex_subscription_picks_up_a_new_topic(
    kafka_broker: Broker, kafka_topic, consumers
) -> None:
    """The broker resolves the regex (at most every 10 s, and when topics are created)."""
    prefix = f"kip848re{uuid.uuid4().hex[:6]}"
    first = kafka_topic(partitions=1, name=f"{prefix}-a")
    kafka_broker.produce([Record(first, b"from-a")])
    group = group_name("kip848-regex")
    consumer = consumers(group)
    consumer.subscribe([f"^{prefix}-.*"])
    assert read(consumer, 1) == ["from-a"]

    second = kafka_topic(partitions=1, name=f"{prefix}-b")
    kafka_broker.produce([Record(second, b"from-b")])
    assert read(consumer, 1) == ["from-b"]
    (member,) = describe(kafka_broker, group).members
    assert {tp.topic for tp in member.assignment.topic_partitions} == {first, second}


def test_kafka_consumer_groups_describes_the_live_members(
    kafka_broker: Broker, kafka_topic, consumers
) -> None:
    topic, group = kafka_topic(partitions=2), group_name("kip848-tool")
    consumer = consumers(group, **{"client.id": "kip848-client"})
    consumer.subscribe([topic])
    eventually(lambda: owned(consumer) == {0, 1}, "both partitions", lambda: consumer.poll(0.1))
    listed = run_kafka_tool(
        CONSUMER_GROUPS,
        ["--bootstrap-server", kafka_broker.bootstrap_servers, "--list", "--type"],
        timeout_s=90,
    )
    assert [line.split() for line in listed.stdout.splitlines() if line.startswith(group)] == [
        [group, "Consumer"]
    ]
    members = run_kafka_tool(
        CONSUMER_GROUPS,
        [
            "--bootstrap-server", kafka_broker.bootstrap_servers, "--describe", "--group",
            group, "--members",
        ],
        timeout_s=90,
    )  # fmt: skip
    assert members.returncode == 0, members.stderr
    header, *rows = [line.split() for line in members.stdout.splitlines() if line.strip()]
    assert header[:2] == ["GROUP", "CONSUMER-ID"]
    (row,) = rows
    by_column = dict(zip(header, row, strict=False))
    assert (by_column["GROUP"], by_column["CLIENT-ID"], by_column["#PARTITIONS"]) == (
        group,
        "kip848-client",
        "2",
    )
    state = run_kafka_tool(
        CONSUMER_GROUPS,
        [
            "--bootstrap-server", kafka_broker.bootstrap_servers, "--describe", "--group",
            group, "--state",
        ],
        timeout_s=90,
    )  # fmt: skip
    header, row = [line.split() for line in state.stdout.splitlines() if line.strip()][-2:]
    described = dict(zip(header, row, strict=False))
    assert (described["ASSIGNMENT-STRATEGY"], described["STATE"], described["#MEMBERS"]) == (
        "uniform",
        "Stable",
        "1",
    )


def test_offsets_sent_in_a_transaction_count_for_a_consumer_group(
    kafka_broker: Broker, kafka_topic, consumers
) -> None:
    """Consume-transform-produce with the consumer protocol: TxnOffsetCommit carries the
    member's id and epoch (from consumer_group_metadata), which the group accepts."""
    source, sink = kafka_topic(partitions=1), kafka_topic(partitions=1)
    group = group_name("kip848-txn")
    kafka_broker.produce(Record(source, f"v{i}".encode()) for i in range(3))
    consumer = consumers(group)
    consumer.subscribe([source])
    assert read(consumer, 3) == ["v0", "v1", "v2"]
    producer = Producer(
        {
            "bootstrap.servers": kafka_broker.bootstrap_servers,
            "transactional.id": f"kip848-{uuid.uuid4().hex[:8]}",
        }
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(sink, b"out")
    producer.send_offsets_to_transaction(
        [TopicPartition(source, 0, 3)], consumer.consumer_group_metadata(), 30
    )
    producer.commit_transaction(30)
    (committed,) = consumer.committed([TopicPartition(source, 0)], timeout=30)
    assert committed.offset == 3


def test_committed_offsets_carry_over_between_the_protocols(
    kafka_broker: Broker, kafka_topic, consumers
) -> None:
    """An empty group of one type is taken over by the other protocol, offsets and all:
    classic -> consumer -> classic under one group id."""
    topic, group = kafka_topic(partitions=1), group_name("kip848-switch")
    kafka_broker.produce(Record(topic, f"v{i}".encode()) for i in range(6))
    classic = consumers(group, **{"group.protocol": "classic"})
    classic.subscribe([topic])
    assert read(classic, 2) == ["v0", "v1"]
    classic.commit(asynchronous=False)
    classic.close()

    modern = consumers(group)
    modern.subscribe([topic])
    assert read(modern, 2) == ["v2", "v3"]
    modern.commit(asynchronous=False)
    assert describe(kafka_broker, group).type == ConsumerGroupType.CONSUMER
    modern.close()

    back = consumers(group, **{"group.protocol": "classic"})
    back.subscribe([topic])
    assert read(back, 2) == ["v4", "v5"]
    assert describe(kafka_broker, group).type == ConsumerGroupType.CLASSIC


def test_a_deleted_consumer_group_is_gone_with_its_offsets(
    kafka_broker: Broker, kafka_topic, consumers
) -> None:
    """Deleting an emptied consumer-protocol group that committed leaves nothing: it is
    not listed again (as a classic group) and its offsets are gone."""
    topic, group = kafka_topic(partitions=1), group_name("kip848-deleted")
    kafka_broker.produce([Record(topic, b"v", partition=0)])
    consumer = consumers(group)
    consumer.subscribe([topic])
    assert read(consumer, 1) == ["v"]
    consumer.commit(asynchronous=False)
    consumer.close()
    admin = kafka_broker.admin()

    def listed() -> list[Any]:
        groups = admin.list_consumer_groups().result(timeout=30).valid
        return [(g.type, g.state) for g in groups if g.group_id == group]

    eventually(
        lambda: listed() == [(ConsumerGroupType.CONSUMER, ConsumerGroupState.EMPTY)], "empty"
    )
    assert [f.result(timeout=30) for f in admin.delete_consumer_groups([group]).values()] == [None]
    assert listed() == []
    committed = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])
    assert committed[group].result(timeout=30).topic_partitions == []


def test_a_rolling_upgrade_runs_both_protocols_in_one_group(
    kafka_broker: Broker, kafka_topic, consumers
) -> None:
    """Kafka 4.1 migrates a live group online: a consumer-protocol member joining a classic
    group upgrades it, the classic member keeps working inside it with a partition the
    broker assigns, kafka-consumer-groups marks who has upgraded, and the group turns
    classic again when the consumer-protocol member leaves."""
    topic, group = kafka_topic(partitions=2), group_name("kip848-rolling")
    classic = consumers(group, **{"group.protocol": "classic", "client.id": "classic"})
    classic.subscribe([topic])
    eventually(lambda: owned(classic) == {0, 1}, "both partitions", lambda: classic.poll(0.1))
    assert describe(kafka_broker, group).type == ConsumerGroupType.CLASSIC

    modern = consumers(group, **{"client.id": "modern"})
    modern.subscribe([topic])

    def pump() -> None:
        classic.poll(0.05)
        modern.poll(0.05)

    eventually(lambda: owned(classic) == {0} and owned(modern) == {1}, "one each", pump)
    described = describe(kafka_broker, group)
    assert (described.type, described.state) == (
        ConsumerGroupType.CONSUMER,
        ConsumerGroupState.STABLE,
    )
    members = run_kafka_tool(
        CONSUMER_GROUPS,
        [
            "--bootstrap-server", kafka_broker.bootstrap_servers, "--describe", "--group",
            group, "--members", "--verbose",
        ],
        timeout_s=90,
    )  # fmt: skip
    assert members.returncode == 0, members.stderr
    header, *rows = [line.split() for line in members.stdout.splitlines() if line.strip()]
    assert header[-1] == "UPGRADED"
    by_client = {row[header.index("CLIENT-ID")]: row[-1] for row in rows}
    assert by_client == {"classic": "false", "modern": "true"}

    kafka_broker.produce(Record(topic, f"v{p}".encode(), partition=p) for p in range(2))
    assert read(classic, 1) == ["v0"]
    assert read(modern, 1) == ["v1"]
    modern.close()
    eventually(lambda: owned(classic) == {0, 1}, "both back", lambda: classic.poll(0.1))
    assert describe(kafka_broker, group).type == ConsumerGroupType.CLASSIC
