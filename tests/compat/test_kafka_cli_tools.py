"""Apache Kafka's own command-line tools against every backend.

Run with ``--kafka-backend=emulator,kafka``: each test drives kafka-topics,
the console producer and consumer, kafka-consumer-groups and kafka-get-offsets
(from the same 4.1 jars the `kafka` backend runs) and expects real Kafka's output.
Tools must also stay quiet: a WARN or ERROR in their log means the broker
answered something they did not expect, even when the exit code is 0.
"""

from __future__ import annotations

import re
import subprocess
import time
import uuid

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

from kafkatest import Broker, Record
from kafkatest.apps.tools import (
    CONSOLE_CONSUMER,
    CONSOLE_PRODUCER,
    CONSUMER_GROUPS,
    TOPICS,
    run_kafka_tool,
    tool_option,
)
from kafkatest.brokers.client import wait_until
from kafkatest.pytest_plugin import unique_topic_name

GET_OFFSETS = "org.apache.kafka.tools.GetOffsetShell"
_LOGGED_PROBLEM = re.compile(r"^(WARN|ERROR) ", re.MULTILINE)


def run_tool(
    broker: Broker, main_class: str, *args: str, input_text: str | None = None, ok: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run a tool against `broker`; with `ok`, insist on exit 0 and a quiet log."""
    result = run_kafka_tool(
        main_class,
        ["--bootstrap-server", broker.bootstrap_servers, *args],
        timeout_s=90,
        input_text=input_text,
    )
    if ok:
        report = f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        assert result.returncode == 0, report
        assert not _LOGGED_PROBLEM.search(result.stderr), report
    return result


def table(stdout: str) -> list[dict[str, str]]:
    """Rows of a kafka-consumer-groups table, keyed by its upper-case header."""
    lines = [line.split() for line in stdout.splitlines() if line.strip()]
    header_at = next(i for i, cells in enumerate(lines) if cells[:2] == ["GROUP", "TOPIC"])
    header = lines[header_at]
    return [
        dict(zip(header, cells, strict=True))
        for cells in lines[header_at + 1 :]
        if len(cells) == len(header)
    ]


def test_topics_tool_creates_lists_describes_grows_and_deletes(kafka_broker: Broker) -> None:
    topic = unique_topic_name("topics-tool")
    try:
        created = run_tool(
            kafka_broker, TOPICS, "--create", "--topic", topic, "--partitions", "2",
            "--config", "retention.ms=86400000",
        )  # fmt: skip
        assert created.stdout.strip() == f"Created topic {topic}."

        listed = run_tool(kafka_broker, TOPICS, "--list")
        assert topic in listed.stdout.splitlines()

        described = run_tool(kafka_broker, TOPICS, "--describe", "--topic", topic).stdout
        summary, *partition_lines = [line for line in described.splitlines() if line]
        assert "PartitionCount: 2\tReplicationFactor: 1\t" in summary
        assert "retention.ms=86400000" in summary
        assert [line.split("\t")[1:] for line in partition_lines] == [
            [f"Topic: {topic}", f"Partition: {p}", f"Leader: {leader}", f"Replicas: {leader}",
             f"Isr: {leader}", "Elr: ", "LastKnownElr: "]
            for p, leader in enumerate(_leaders(kafka_broker, topic))
        ]  # fmt: skip

        run_tool(kafka_broker, TOPICS, "--alter", "--topic", topic, "--partitions", "3")
        assert kafka_broker.partition_count(topic) == 3

        shrink = run_tool(
            kafka_broker, TOPICS, "--alter", "--topic", topic, "--partitions", "2", ok=False
        )
        assert shrink.returncode == 1
        assert (
            f"Error while executing topic command : The topic {topic} currently has "
            "3 partition(s); 2 would not be an increase." in shrink.stdout
        )

        run_tool(kafka_broker, TOPICS, "--delete", "--topic", topic)
        wait_until(lambda: not kafka_broker.topic_exists(topic), 30, f"{topic} is deleted")
    finally:
        if kafka_broker.topic_exists(topic):
            kafka_broker.delete_topic(topic)


def _leaders(broker: Broker, topic: str) -> list[int]:
    metadata = broker.admin().list_topics(topic=topic, timeout=10).topics[topic]
    return [metadata.partitions[p].leader for p in sorted(metadata.partitions)]


def test_console_producer_and_consumer_round_trip_keys_and_headers(
    kafka_broker: Broker, kafka_topic
) -> None:
    topic = kafka_topic(partitions=2)
    lines = ["source:web,trace:t-1\tk-1:first", "source:app\tk-2:second", "source:cli\tk-3:third"]
    reader = tool_option(CONSOLE_PRODUCER, "--property")
    run_tool(
        kafka_broker, CONSOLE_PRODUCER, "--topic", topic,
        reader, "parse.key=true", reader, "key.separator=:", reader, "parse.headers=true",
        input_text="\n".join(lines) + "\n",
    )  # fmt: skip

    # What any other client reads is what the tool wrote (keys partitioned by murmur2).
    stored = kafka_broker.consume(topic)
    assert {(r.key, r.value, r.headers) for r in stored} == {
        (b"k-1", b"first", (("source", b"web"), ("trace", b"t-1"))),
        (b"k-2", b"second", (("source", b"app"),)),
        (b"k-3", b"third", (("source", b"cli"),)),
    }

    formatter = tool_option(CONSOLE_CONSUMER, "--property")
    consumed = run_tool(
        kafka_broker, CONSOLE_CONSUMER, "--topic", topic, "--from-beginning",
        "--max-messages", "3", "--timeout-ms", "30000",
        formatter, "print.key=true", formatter, "print.headers=true",
        formatter, "print.partition=true",
    )  # fmt: skip
    assert sorted(consumed.stdout.splitlines()) == sorted(
        f"Partition:{r.partition}\t"
        f"{','.join(f'{k}:{v.decode()}' for k, v in r.headers)}\t"
        f"{r.key.decode()}\t{r.value.decode()}"
        for r in stored
        if r.key is not None and r.value is not None
    )
    assert "Processed a total of 3 messages" in consumed.stderr


def test_consumer_groups_tool_describes_lag_resets_and_deletes(
    kafka_broker: Broker, kafka_topic
) -> None:
    topic = kafka_topic(partitions=2)
    group = f"kt-tools-{uuid.uuid4().hex[:8]}"
    kafka_broker.produce(Record(topic, f"v{i}".encode(), partition=i % 2) for i in range(4))
    run_tool(
        kafka_broker, CONSOLE_CONSUMER, "--topic", topic, "--group", group,
        "--from-beginning", "--max-messages", "4", "--timeout-ms", "30000",
    )  # fmt: skip
    kafka_broker.produce([Record(topic, b"late", partition=0)])  # lag 1 on partition 0

    assert group in run_tool(kafka_broker, CONSUMER_GROUPS, "--list").stdout.splitlines()
    described = run_tool(kafka_broker, CONSUMER_GROUPS, "--describe", "--group", group)
    assert f"Consumer group '{group}' has no active members." in described.stderr
    rows = {int(row["PARTITION"]): row for row in table(described.stdout)}
    assert {p: (r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"]) for p, r in rows.items()} == {
        0: ("2", "3", "1"),
        1: ("2", "2", "0"),
    }

    reset = run_tool(
        kafka_broker, CONSUMER_GROUPS, "--reset-offsets", "--group", group, "--topic", topic,
        "--to-earliest", "--execute",
    )  # fmt: skip
    assert sorted((row["PARTITION"], row["NEW-OFFSET"]) for row in table(reset.stdout)) == [
        ("0", "0"),
        ("1", "0"),
    ]
    assert _committed(kafka_broker, group, topic) == {0: 0, 1: 0}

    deleted_offsets = run_tool(
        kafka_broker, CONSUMER_GROUPS, "--delete-offsets", "--group", group, "--topic", f"{topic}:1"
    )
    assert f"Request succeeded for deleting offsets from group {group}." in deleted_offsets.stdout
    assert _committed(kafka_broker, group, topic) == {0: 0, 1: -1001}

    deleted = run_tool(kafka_broker, CONSUMER_GROUPS, "--delete", "--group", group)
    assert f"Deletion of requested consumer groups ('{group}') was successful." in deleted.stdout
    groups = kafka_broker.admin().list_consumer_groups().result(timeout=10)
    assert group not in {g.group_id for g in groups.valid}


def _committed(broker: Broker, group: str, topic: str) -> dict[int, int]:
    """Committed offsets as librdkafka reads them (-1001: none)."""
    wanted = ConsumerGroupTopicPartitions(
        group, [TopicPartition(topic, 0), TopicPartition(topic, 1)]
    )
    future = broker.admin().list_consumer_group_offsets([wanted])[group]
    return {tp.partition: tp.offset for tp in future.result(timeout=10).topic_partitions}


def test_get_offsets_tool_answers_max_timestamp_and_earliest_local(
    kafka_broker: Broker, kafka_topic
) -> None:
    topic = kafka_topic()
    # Recent timestamps: older ones would be aged out by retention on either backend.
    now_ms = int(time.time() * 1000)
    kafka_broker.produce(
        Record(topic, b"x", partition=0, timestamp_ms=now_ms - age_s * 1000)
        for age_s in (30, 10, 20)
    )
    kafka_broker.delete_records(topic, {0: 1})

    def offsets_at(time_spec: str) -> str:
        return run_tool(kafka_broker, GET_OFFSETS, "--topic", topic, "--time", time_spec).stdout

    assert offsets_at("-3").split() == [f"{topic}:0:1"]  # the newest record
    assert offsets_at("-4").split() == [f"{topic}:0:1"]  # log start, as -2 without tiering
