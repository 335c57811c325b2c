"""Transactions left open: a producer that hangs mid-transaction, or one that crashed.

An open transaction holds the partition's last stable offset at its first record:
read_committed readers (Spark with ``kafka.isolation.level=read_committed``)
stall there while read_uncommitted readers and later records go on. The
producer is a real transactional client in a child process, so the fault is the
same on every backend: it writes its records, flushes them, and then either
waits (hung) or is killed with SIGKILL (crashed, as a killed producer would
leave it: no abort is ever sent). The transaction then stays open until
``transaction.timeout.ms`` passes on the broker (on the emulator, advance its
clock) or until `end` fences the transactional id, as a restarted producer would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass, fields

from confluent_kafka import KafkaException, Producer

from kafkatest.brokers.base import Broker
from kafkatest.errors import BrokerError

#: Kafka's transaction.max.timeout.ms: the longest a transaction may stay open.
MAX_TRANSACTION_TIMEOUT_MS = 900_000
#: librdkafka's smallest transaction.timeout.ms.
MIN_TRANSACTION_TIMEOUT_MS = 1_000
MAX_RECORDS = 10_000

#: The child: open a transaction, write, flush, say so, then wait for stdin to close.
_CHILD = """
import json, os, sys
from confluent_kafka import Producer
topic, partition, records, transactional_id, timeout_ms = sys.argv[1:6]
producer = Producer({
    **json.loads(os.environ["KAFKATEST_CLIENT_CONFIG"]),
    "transactional.id": transactional_id,
    "transaction.timeout.ms": int(timeout_ms),
})
producer.init_transactions(30)
producer.begin_transaction()
for index in range(int(records)):
    producer.produce(topic, f"open-{index}".encode(), partition=int(partition))
if producer.flush(30):
    sys.exit("records not acknowledged")
print("open", flush=True)
sys.stdin.read()
os._exit(0)  # never commit nor abort: the transaction is left as it is
"""


@dataclass
class OpenTransaction:
    kind: str
    transactional_id: str
    topic: str
    partition: int
    records: int
    #: The hung producer's process; None once it is gone (crashed or ended).
    process: subprocess.Popen[str] | None

    def describe(self) -> dict[str, object]:
        """Every field but the process, for the list of active faults."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "process"}


def open_transaction(
    broker: Broker,
    topic: str,
    partition: int,
    records: int,
    transaction_timeout_ms: int,
    crash: bool,
) -> OpenTransaction:
    """Start a producer that leaves a transaction open; returns once its records are in."""
    transactional_id = f"kafkatest-{'crashed' if crash else 'hung'}-{uuid.uuid4().hex[:12]}"
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _CHILD,
            topic,
            str(partition),
            str(records),
            transactional_id,
            str(transaction_timeout_ms),
        ],
        # In the environment, not argv: on a secured broker it holds a password.
        env={**os.environ, "KAFKATEST_CLIENT_CONFIG": _connection(broker)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ready = _read_ready(process)
    except BaseException:
        _kill(process)
        raise
    if not ready:
        _kill(process)
        stderr = process.stderr.read() if process.stderr else ""
        raise BrokerError(
            f"the producer opening a transaction on {topic}[{partition}] failed: "
            f"{stderr.strip()[-2000:] or 'no output'}"
        )
    kind = "crashed_transaction" if crash else "hung_transaction"
    if crash:
        _kill(process)
        return OpenTransaction(kind, transactional_id, topic, partition, records, None)
    return OpenTransaction(kind, transactional_id, topic, partition, records, process)


def _connection(broker: Broker) -> str:
    """The broker's own client settings (its login on a secured broker) as JSON."""
    config = broker.client_config()
    return json.dumps({k: v for k, v in config.items() if isinstance(v, str | int | bool)})


def _read_ready(process: subprocess.Popen[str]) -> bool:
    """Whether the child said "open". Its own client time-outs (30 s) bound the wait:
    on failure it exits, and the read ends."""
    assert process.stdout is not None
    return process.stdout.readline().strip() == "open"


def _kill(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.kill()
    process.wait(timeout=10)
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            stream.close()


def end(broker: Broker, transaction: OpenTransaction) -> None:
    """Abort the open transaction the way Kafka lets anyone: a new producer with the
    same transactional id initializes, which fences the old one and aborts its
    transaction. The hung producer's process is ended first."""
    if transaction.process is not None:
        _kill(transaction.process)
        transaction.process = None
    producer = Producer(
        {
            **broker.client_config(),
            "transactional.id": transaction.transactional_id,
        }
    )
    try:
        producer.init_transactions(30)
    except KafkaException as exc:
        raise BrokerError(
            f"could not abort the open transaction of {transaction.transactional_id!r}: "
            f"{exc.args[0] if exc.args else exc}"
        ) from exc
    finally:
        producer.flush(5)
