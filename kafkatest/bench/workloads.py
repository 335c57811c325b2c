"""The workloads, identical for every broker: produce, consume, Spark batch read.

They talk to a bootstrap address only, so the broker under test can be a JVM or a
Python process; each returns seconds of wall time for a fixed amount of work.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, DataFrameReader, SparkSession
    from pyspark.sql.streaming import DataStreamReader

PARTITIONS = 4
VALUE = b"v" * 100


def create_topic(bootstrap: str, topic: str, partitions: int = PARTITIONS) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        info = admin.list_topics(topic, timeout=5).topics.get(topic)
        if info and not info.error and all(p.leader >= 0 for p in info.partitions.values()):
            return
        time.sleep(0.05)
    raise RuntimeError(f"topic {topic} not ready")


def produce(bootstrap: str, topic: str, count: int) -> float:
    """Seconds to produce `count` keyed, headered 100-byte records, acks=all."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 5,
            "acks": "all",
            "queue.buffering.max.messages": 500000,
        }
    )
    headers: list[tuple[str, str | bytes | None]] = [("source", b"bench")]
    started = time.perf_counter()
    for index in range(count):
        while True:
            try:
                producer.produce(topic, VALUE, key=str(index).encode(), headers=headers)
                break
            except BufferError:
                producer.poll(0.01)
        if index % 10000 == 0:
            producer.poll(0)
    remaining = producer.flush(120)
    elapsed = time.perf_counter() - started
    if remaining:
        raise RuntimeError(f"{remaining} records not acknowledged")
    return elapsed


def consume(bootstrap: str, topic: str, count: int) -> float:
    """Seconds to read `count` records back from the start of every partition."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "kafkatest-bench",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            # librdkafka pauses fetching for fetch.queue.backoff.ms (1 s) once its local
            # queue passes queued.min.messages: with a broker this fast the queue fills
            # in a fraction of a second and the pause, not either broker, was most of
            # the figure. Both brokers are read with the same setting.
            "fetch.queue.backoff.ms": 10,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    seen = 0
    started = time.perf_counter()
    deadline = time.monotonic() + 300
    while seen < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"consumed only {seen} of {count}")
        # Never ask for more than is left: consume() waits out its timeout for a batch
        # it cannot fill, which timed a 1 s wait (whenever a call had returned a short
        # batch) rather than either broker.
        for message in consumer.consume(min(10000, count - seen), timeout=1.0):
            if message.error() is None:
                seen += 1
    elapsed = time.perf_counter() - started
    consumer.close()
    return elapsed


@dataclass(frozen=True)
class ClientRates:
    """Median records/s of produce and consume, the client's own CPU for each, and the
    broker process's CPU for each.

    `*_client_cpu_s` is the CPU time of the thread that drives the client (the Python
    loop and librdkafka's work on that thread) per run: no broker can make a run
    shorter than that, so it tells how much of a figure is the broker's at all.
    `*_broker_cpu_s` is the broker process's own CPU time (every thread, user and
    system, from /proc) over the same run: what the broker costs the machine, which the
    client-bound throughput does not show (NaN when the broker's process is not known)."""

    produce: float
    consume: float
    produce_client_cpu_s: float
    consume_client_cpu_s: float
    produce_broker_cpu_s: float = float("nan")
    consume_broker_cpu_s: float = float("nan")


_TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def process_cpu_s(pid: int | None) -> float:
    """CPU seconds (user + system, all threads, those that ended included) a process
    has used, from /proc/<pid>/stat; NaN without a pid. Its own process, not this
    one's: the brokers run as child processes in the bench."""
    if pid is None:
        return float("nan")
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS_PER_S  # utime, stime


def produce_and_consume_rates(
    bootstraps: Mapping[str, str],
    topic: str,
    count: int,
    runs: int = 3,
    turn: Callable[[str], AbstractContextManager[object]] = lambda _broker: nullcontext(),
    pids: Mapping[str, int | None] | None = None,
) -> dict[str, ClientRates]:
    """Per broker (name: bootstrap), the median records/s of `runs` produces of `count`
    records, each to a fresh topic (`topic`, `topic-2`, ...), and of reading each back.

    The brokers take turns, a produce and its read-back each, round by round: one run
    on a shared machine can be off by half, and the clients' own pauses (librdkafka's
    fetch queue backoff is a second) land in some runs and not others; measured one
    broker after the other, a busy minute (Spark's JVM settling after its start, the
    first broker's turn) fell on one broker's figures only. Each broker's round runs
    inside `turn(name)` (the bench pauses the other brokers there). `pids` (name:
    process id) adds each broker process's own CPU over its produce and its consume."""
    rounds: dict[str, list[tuple[float, ...]]] = {name: [] for name in bootstraps}
    for run in range(runs):
        name = topic if run == 0 else f"{topic}-{run + 1}"
        for broker, bootstrap in bootstraps.items():
            pid = (pids or {}).get(broker)
            with turn(broker):
                create_topic(bootstrap, name)
                cpu, broker_cpu = time.thread_time(), process_cpu_s(pid)
                produced = count / produce(bootstrap, name, count)
                produce_cpu = time.thread_time() - cpu
                produce_broker_cpu = process_cpu_s(pid) - broker_cpu
                cpu, broker_cpu = time.thread_time(), process_cpu_s(pid)
                consumed = count / consume(bootstrap, name, count)
                consume_cpu = time.thread_time() - cpu
                consume_broker_cpu = process_cpu_s(pid) - broker_cpu
            rounds[broker].append(
                (
                    produced,
                    consumed,
                    produce_cpu,
                    consume_cpu,
                    produce_broker_cpu,
                    consume_broker_cpu,
                )
            )
    return {
        broker: ClientRates(*(statistics.median(column) for column in zip(*figures, strict=True)))
        for broker, figures in rounds.items()
    }


def kafka_source(
    reader: DataFrameReader | DataStreamReader, bootstrap: str, topic: str
) -> DataFrame:
    """`topic` from its earliest offset, through `reader` (``spark.read`` for a batch,
    ``spark.readStream`` for a stream)."""
    return (
        reader.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
    )


def spark_read(spark: SparkSession, bootstrap: str, topic: str, expected: int) -> float:
    """Seconds for a batch read of the whole topic with format("kafka") and a count."""
    started = time.perf_counter()
    counted = kafka_source(spark.read, bootstrap, topic).count()
    elapsed = time.perf_counter() - started
    if counted != expected:
        raise RuntimeError(f"Spark counted {counted} records, expected {expected}")
    return elapsed


def group_join(bootstrap: str, topic: str, consumers: int = PARTITIONS) -> float:
    """Seconds from four consumers subscribing to one new group to each holding a partition.

    This is what a consumer-group test waits for before it can see records; it is
    decided by how the coordinator forms the group (initial delay, rebalance notices).

    Each member is polled on a thread of its own and notes the moment its partition
    is handed to it (`on_assign`): polling the four in turn from one loop measured
    in steps of the loop's round (four 10 ms polls), which hid differences smaller
    than 40 ms between brokers.
    """
    group = f"kafkatest-bench-join-{time.monotonic_ns()}"
    members = [
        Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
        for _ in range(consumers)
    ]
    holding: dict[int, float] = {}
    lock = threading.Lock()
    everyone_holds = threading.Event()
    give_up = threading.Event()

    def note_assignment(index: int, partitions: list[TopicPartition]) -> None:
        with lock:
            if len(partitions) == 1:
                holding[index] = time.perf_counter()
            else:
                holding.pop(index, None)
            if len(holding) == consumers:
                everyone_holds.set()

    def keep_polling(index: int) -> None:
        member = members[index]
        member.subscribe(
            [topic],
            on_assign=lambda _c, parts: note_assignment(index, parts),
            on_revoke=lambda _c, _parts: note_assignment(index, []),
        )
        while not (everyone_holds.is_set() or give_up.is_set()):
            member.poll(0.05)

    started = time.perf_counter()
    pollers = [threading.Thread(target=keep_polling, args=(i,)) for i in range(consumers)]
    for poller in pollers:
        poller.start()
    try:
        if not everyone_holds.wait(120):
            raise RuntimeError(f"{consumers} consumers did not each get one partition in 120 s")
        return max(holding.values()) - started
    finally:
        give_up.set()
        for poller in pollers:
            poller.join()
        for member in members:
            member.close()
