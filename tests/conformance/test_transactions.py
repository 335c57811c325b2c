"""Transactions as a client sees them, asserted identically on the emulator and Kafka 4.1.

confluent-kafka (librdkafka 2.x) is a TV1 client (AddPartitionsToTxn v0, EndTxn v1,
Produce v10): it keeps its producer epoch across transactions. Every commit or abort
writes one control batch (a marker) per partition, which takes one offset; consumers
skip it, so the offsets they see have gaps where markers are.
"""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import (
    Consumer,
    ConsumerGroupTopicPartitions,
    IsolationLevel,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, OffsetSpec

from kafkatest import Broker
from kafkatest.apps.tools import TRANSACTIONS, kafka_tools_classpath, run_kafka_tool
from kafkatest.brokers.capabilities import Capability
from kafkatest.brokers.client_waits import wait_until

JAVA_DIR = Path(__file__).parent / "java"

TIMEOUT_S = 30


def txn_producer(broker: Broker, transactional_id: str | None = None, **config: object) -> Producer:
    producer = Producer(
        {
            **broker.client_config(),
            "transactional.id": transactional_id or f"txn-{uuid.uuid4().hex[:8]}",
            **config,
        }
    )
    producer.init_transactions(TIMEOUT_S)
    return producer


def read(broker: Broker, topic: str, isolation: str, partition: int = 0) -> list[tuple[int, bytes]]:
    """(offset, value) of every record up to the end the isolation level allows."""
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": f"reader-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": isolation,
        }
    )
    consumer.assign([TopicPartition(topic, partition, 0)])
    out: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    return out
                raise KafkaException(msg.error())
            out.append((msg.offset(), msg.value()))
    finally:
        consumer.close()
    raise AssertionError(f"{isolation} read of {topic} never reached the end: {out}")


def latest(broker: Broker, topic: str, isolation: IsolationLevel) -> int:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    tp = TopicPartition(topic, 0)
    result = admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=isolation)
    return int(result[tp].result(TIMEOUT_S).offset)


@pytest.fixture
def producers() -> Iterator[list[Producer]]:
    """Producers a test opens; flushed-and-dropped at the end, so no thread outlives it."""
    made: list[Producer] = []
    yield made
    for producer in made:
        producer.purge()


def test_commit_abort_and_plain_record_by_isolation_level(
    kafka_broker: Broker, kafka_topic
) -> None:
    """Kafka: c1 c2 at 0-1, commit marker 2, a1 at 3, abort marker 4, plain record 5."""
    topic = kafka_topic()
    producer = txn_producer(kafka_broker)
    producer.begin_transaction()
    producer.produce(topic, b"c1", partition=0)
    producer.produce(topic, b"c2", partition=0)
    producer.commit_transaction(TIMEOUT_S)
    producer.begin_transaction()
    producer.produce(topic, b"a1", partition=0)
    producer.flush(TIMEOUT_S)
    producer.abort_transaction(TIMEOUT_S)
    _plain(kafka_broker, topic, b"plain")

    assert read(kafka_broker, topic, "read_committed") == [(0, b"c1"), (1, b"c2"), (5, b"plain")]
    assert read(kafka_broker, topic, "read_uncommitted") == [
        (0, b"c1"),
        (1, b"c2"),
        (3, b"a1"),
        (5, b"plain"),
    ]
    assert latest(kafka_broker, topic, IsolationLevel.READ_COMMITTED) == 6
    assert latest(kafka_broker, topic, IsolationLevel.READ_UNCOMMITTED) == 6


def _plain(broker: Broker, topic: str, value: bytes) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    producer.produce(topic, value, partition=0)
    assert producer.flush(TIMEOUT_S) == 0


def test_open_transaction_holds_back_read_committed_at_the_last_stable_offset(
    kafka_broker: Broker, kafka_topic, producers: list[Producer]
) -> None:
    """An open transaction at offset 2 stops read_committed there; read_uncommitted and
    a later plain record go on. ListOffsets latest: the LSO (2) against the HW (4)."""
    topic = kafka_topic()
    _plain(kafka_broker, topic, b"p0")
    _plain(kafka_broker, topic, b"p1")
    hung = txn_producer(kafka_broker)
    producers.append(hung)
    hung.begin_transaction()
    hung.produce(topic, b"open", partition=0)
    hung.flush(TIMEOUT_S)
    _plain(kafka_broker, topic, b"p3")

    assert latest(kafka_broker, topic, IsolationLevel.READ_COMMITTED) == 2
    assert latest(kafka_broker, topic, IsolationLevel.READ_UNCOMMITTED) == 4
    assert read(kafka_broker, topic, "read_committed") == [(0, b"p0"), (1, b"p1")]
    assert read(kafka_broker, topic, "read_uncommitted") == [
        (0, b"p0"),
        (1, b"p1"),
        (2, b"open"),
        (3, b"p3"),
    ]
    hung.commit_transaction(TIMEOUT_S)
    # Kafka writes the commit's markers after EndTxn has answered (KIP-98): on a busy
    # machine the last stable offset moves a moment after commit_transaction returns.
    wait_until(
        lambda: latest(kafka_broker, topic, IsolationLevel.READ_COMMITTED) == 5,
        TIMEOUT_S,
        "the commit's marker moved the last stable offset to 5",
    )
    assert read(kafka_broker, topic, "read_committed") == [
        (0, b"p0"),
        (1, b"p1"),
        (2, b"open"),
        (3, b"p3"),
    ]


def test_a_new_producer_with_the_same_id_fences_the_zombie(
    kafka_broker: Broker, kafka_topic, producers: list[Producer]
) -> None:
    """InitProducerId from the new instance aborts the zombie's open transaction; the
    zombie's commit then fails fatally (fenced) and its records never become visible."""
    topic = kafka_topic()
    transactional_id = f"fence-{uuid.uuid4().hex[:8]}"
    zombie = txn_producer(kafka_broker, transactional_id)
    producers.append(zombie)
    zombie.begin_transaction()
    zombie.produce(topic, b"zombie", partition=0)
    zombie.flush(TIMEOUT_S)

    successor = txn_producer(kafka_broker, transactional_id)
    with pytest.raises(KafkaException) as failure:
        zombie.commit_transaction(TIMEOUT_S)
    error = failure.value.args[0]
    assert error.fatal()
    assert error.code() == KafkaError._FENCED

    successor.begin_transaction()
    successor.produce(topic, b"successor", partition=0)
    successor.commit_transaction(TIMEOUT_S)
    # zombie 0, abort marker 1 (written when the successor fenced it), successor 2, commit 3
    assert read(kafka_broker, topic, "read_committed") == [(2, b"successor")]
    assert read(kafka_broker, topic, "read_uncommitted") == [(0, b"zombie"), (2, b"successor")]


def transaction_timeout_ms(broker: Broker) -> int:
    """Long where the broker's clock is the test's (the emulator), so real time never
    expires it early; on real Kafka short enough to wait out (5 s)."""
    return 60_000 if broker.can(Capability.CLOCK) else 5_000


def let_transactions_time_out(broker: Broker) -> None:
    """Past `transaction_timeout_ms` plus the 500 ms abort check: the emulator's clock
    jumps (kafka_broker.clock), real Kafka's timers need the real time to pass."""
    broker.let_time_pass((transaction_timeout_ms(broker) + 600) / 1000)


def test_a_hung_transaction_is_aborted_after_its_timeout(
    kafka_broker: Broker, kafka_topic, producers: list[Producer]
) -> None:
    """Past transaction.timeout.ms the coordinator fences the producer (epoch + 1) and
    aborts: the marker frees read_committed readers, the producer's commit then fails."""
    topic = kafka_topic()
    hung = txn_producer(
        kafka_broker, **{"transaction.timeout.ms": transaction_timeout_ms(kafka_broker)}
    )
    producers.append(hung)
    hung.begin_transaction()
    hung.produce(topic, b"hung", partition=0)
    hung.flush(TIMEOUT_S)
    assert latest(kafka_broker, topic, IsolationLevel.READ_COMMITTED) == 0

    let_transactions_time_out(kafka_broker)
    deadline = time.monotonic() + TIMEOUT_S
    while latest(kafka_broker, topic, IsolationLevel.READ_COMMITTED) != 2:
        assert time.monotonic() < deadline, "the hung transaction was never aborted"
        time.sleep(0.1)
    assert read(kafka_broker, topic, "read_committed") == []
    assert read(kafka_broker, topic, "read_uncommitted") == [(0, b"hung")]
    with pytest.raises(KafkaException) as failure:
        hung.commit_transaction(TIMEOUT_S)
    error = failure.value.args[0]
    assert (error.code(), error.fatal()) == (KafkaError._FENCED, True)


def committed_offsets(broker: Broker, group: str, topic: str, require_stable: bool) -> object:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    request = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0)])
    future = admin.list_consumer_group_offsets([request], require_stable=require_stable)[group]
    partition = future.result(TIMEOUT_S).topic_partitions[0]
    if partition.error is not None:
        return partition.error.code()
    return partition.offset


def test_offsets_sent_to_a_transaction_are_committed_with_it(
    kafka_broker: Broker, kafka_topic
) -> None:
    """send_offsets_to_transaction: pending (unstable to require_stable readers, absent
    to others) until the commit; an aborted transaction's offsets never land."""
    topic = kafka_topic()
    group = f"txn-group-{uuid.uuid4().hex[:8]}"
    consumer = Consumer({"bootstrap.servers": kafka_broker.bootstrap_servers, "group.id": group})
    metadata = consumer.consumer_group_metadata()
    producer = txn_producer(kafka_broker)
    try:
        producer.begin_transaction()
        producer.produce(topic, b"out", partition=0)
        producer.send_offsets_to_transaction([TopicPartition(topic, 0, 7)], metadata, TIMEOUT_S)
        producer.flush(TIMEOUT_S)
        assert committed_offsets(kafka_broker, group, topic, require_stable=False) == -1001
        assert committed_offsets(kafka_broker, group, topic, require_stable=True) == (
            KafkaError.UNSTABLE_OFFSET_COMMIT
        )
        producer.commit_transaction(TIMEOUT_S)
        assert committed_offsets(kafka_broker, group, topic, require_stable=True) == 7

        producer.begin_transaction()
        producer.send_offsets_to_transaction([TopicPartition(topic, 0, 9)], metadata, TIMEOUT_S)
        producer.abort_transaction(TIMEOUT_S)
        assert committed_offsets(kafka_broker, group, topic, require_stable=True) == 7
    finally:
        consumer.close()


def transactions_tool(broker: Broker, *args: str) -> list[dict[str, str]]:
    """Run Kafka's kafka-transactions and parse its tab-separated table."""
    result = run_kafka_tool(TRANSACTIONS, ["--bootstrap-server", broker.bootstrap_servers, *args])
    assert result.returncode == 0, result.stderr
    lines = [line.split("\t") for line in result.stdout.splitlines() if line.strip()]
    header = [column.strip() for column in lines[0]]
    return [dict(zip(header, (cell.strip() for cell in row), strict=False)) for row in lines[1:]]


def test_kafka_transactions_tool_lists_and_describes(
    kafka_broker: Broker, kafka_topic, producers: list[Producer]
) -> None:
    """kafka-transactions list / describe / describe-producers, as Kafka prints them."""
    topic = kafka_topic()
    open_id = f"tool-open-{uuid.uuid4().hex[:8]}"
    done_id = f"tool-done-{uuid.uuid4().hex[:8]}"
    hung = txn_producer(kafka_broker, open_id)
    producers.append(hung)
    hung.begin_transaction()
    hung.produce(topic, b"open", partition=0)
    hung.flush(TIMEOUT_S)
    done = txn_producer(kafka_broker, done_id)
    done.begin_transaction()
    done.produce(topic, b"done", partition=0)
    done.commit_transaction(TIMEOUT_S)

    listed = {
        row["TransactionalId"]: row
        for row in transactions_tool(kafka_broker, "list")
        if row["TransactionalId"] in (open_id, done_id)
    }
    assert {k: (v["Coordinator"], v["TransactionState"]) for k, v in listed.items()} == {
        open_id: ("1", "Ongoing"),
        done_id: ("1", "CompleteCommit"),
    }
    described = transactions_tool(kafka_broker, "describe", "--transactional-id", open_id)
    assert [
        (r["ProducerId"], r["ProducerEpoch"], r["TransactionState"], r["TopicPartitions"])
        for r in described
    ] == [(listed[open_id]["ProducerId"], "0", "Ongoing", f"{topic}-0")]
    assert described[0]["TransactionTimeoutMs"] == "60000"
    described = transactions_tool(kafka_broker, "describe", "--transactional-id", done_id)
    assert [(r["TransactionState"], r["TopicPartitions"]) for r in described] == [
        ("CompleteCommit", "")
    ]
    assert int(described[0]["CurrentTransactionStartTimeMs"]) > 0, "kept after the commit"

    producers_table = transactions_tool(
        kafka_broker, "describe-producers", "--topic", topic, "--partition", "0"
    )
    by_id = {row["ProducerId"]: row for row in producers_table}
    assert set(by_id) == {listed[open_id]["ProducerId"], listed[done_id]["ProducerId"]}
    # The open transaction started at offset 0 and has no marker yet; the committed
    # one's marker carries the coordinator epoch (0).
    assert [
        (
            r["ProducerEpoch"],
            r["LatestCoordinatorEpoch"],
            r["LastSequence"],
            r["CurrentTransactionStartOffset"],
        )
        for r in (by_id[listed[open_id]["ProducerId"]], by_id[listed[done_id]["ProducerId"]])
    ] == [("0", "-1", "0", "0"), ("0", "0", "0", "None")]

    missing = run_kafka_tool(
        TRANSACTIONS,
        [
            "--bootstrap-server",
            kafka_broker.bootstrap_servers,
            "describe",
            "--transactional-id",
            "nope-" + open_id,
        ],
    )
    assert missing.returncode == 1
    assert "could not be found" in missing.stderr


@pytest.mark.kafka_min_version("4.0", "transaction.version 2 (KIP-890) is finalized from Kafka 4.0")
def test_java_client_uses_transaction_version_2(kafka_broker: Broker, kafka_topic) -> None:
    """Kafka 4.1 finalizes transaction.version 2, so its Java client skips
    AddPartitionsToTxn (Produce v12+ adds the partition) and AddOffsetsToTxn, and every
    EndTxn v5 bumps the epoch: 0 -> 1 (commit) -> 2 (abort); a second instance fences
    the zombie's open transaction (3, aborted) and starts at 4; its commit makes 5.

    Right after EndTxn Kafka may still be writing the markers (PrepareCommit with the
    partitions listed) or be done (CompleteCommit, none); the emulator is always done.
    """
    java = shutil.which("java")
    if java is None:
        pytest.skip("the Java client needs java on PATH")
    topic = kafka_topic()
    group = f"java-txn-{uuid.uuid4().hex[:8]}"
    run = subprocess.run(
        [
            java,
            "-cp",
            kafka_tools_classpath(),
            str(JAVA_DIR / "TxnProducer.java"),
            kafka_broker.bootstrap_servers,
            topic,
            f"java-txn-{uuid.uuid4().hex[:8]}",
            group,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    settled = {"PrepareCommit": "CompleteCommit", "PrepareAbort": "CompleteAbort"}
    steps = []
    for line in run.stdout.splitlines():
        words = line.split()
        if len(words) == 6 and words[2] == "epoch":
            when, state, epoch, partitions = words[0], words[1], words[3], words[5]
            if state in settled:
                state, partitions = settled[state], "0"
            steps.append((when, state, int(epoch), int(partitions)))
    assert steps == [
        ("initialized", "Empty", 0, 0),
        ("open", "Ongoing", 0, 2),  # the topic partition and the group's offsets partition
        ("committed", "CompleteCommit", 1, 0),
        ("aborted", "CompleteAbort", 2, 0),
        ("fenced", "Empty", 4, 0),
        ("successor", "CompleteCommit", 5, 0),
    ]
    assert "zombie fenced" in run.stdout
    assert run.stdout.splitlines()[-1] == "offset 5"
    # c1 c2, commit 2, a1 3, abort 4, zombie 5, abort 6 (the fence), c3 7, commit 8
    assert read(kafka_broker, topic, "read_committed") == [(0, b"c1"), (1, b"c2"), (7, b"c3")]
    assert read(kafka_broker, topic, "read_uncommitted") == [
        (0, b"c1"),
        (1, b"c2"),
        (3, b"a1"),
        (5, b"zombie"),
        (7, b"c3"),
    ]


def test_kafka_transactions_tool_aborts_a_hanging_transaction(
    kafka_broker: Broker, kafka_topic, kafka_faults
) -> None:
    """`kafka-transactions abort` finds the crashed producer by the transaction's start
    offset (DescribeProducers) and has the leader write an abort marker
    (WriteTxnMarkers): read_committed readers are free again."""
    topic = kafka_topic()
    kafka_faults.crash_producer_mid_transaction(topic)
    assert latest(kafka_broker, topic, IsolationLevel.READ_COMMITTED) == 0
    aborted = run_kafka_tool(
        TRANSACTIONS,
        [
            "--bootstrap-server",
            kafka_broker.bootstrap_servers,
            "abort",
            "--topic",
            topic,
            "--partition",
            "0",
            "--start-offset",
            "0",
        ],
    )
    assert aborted.returncode == 0, aborted.stderr
    assert latest(kafka_broker, topic, IsolationLevel.READ_COMMITTED) == 2
    assert read(kafka_broker, topic, "read_committed") == []
    (producer,) = transactions_tool(
        kafka_broker, "describe-producers", "--topic", topic, "--partition", "0"
    )
    assert producer["CurrentTransactionStartOffset"] == "None"


@pytest.mark.kafka_broker_config({"transaction.max.timeout.ms": 5000})
def test_a_transaction_timeout_over_the_brokers_maximum_is_refused(kafka_broker: Broker) -> None:
    """transaction.max.timeout.ms caps what a producer may ask for: InitProducerId
    answers INVALID_TRANSACTION_TIMEOUT, fatal to the producer."""
    with pytest.raises(KafkaException) as failure:
        txn_producer(kafka_broker, **{"transaction.timeout.ms": 10000})
    assert failure.value.args[0].code() == KafkaError.INVALID_TRANSACTION_TIMEOUT
    txn_producer(kafka_broker, **{"transaction.timeout.ms": 5000})
