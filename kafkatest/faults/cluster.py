"""Faults on a cluster of several brokers: one broker down, a partition's leader moved.

Both backends run clusters (the emulator with `brokers=N` in one process, Kafka
with `brokers=N` as N JVMs and a controller) and both take the same calls:
`stop_node`/`start_node` on the broker object, and here a leader move. On Kafka
a move is what an operator does: a reassignment that puts the new leader first in
the replica list (AlterPartitionReassignments, which confluent-kafka's admin
client does not offer, so it is sent as one request with the protocol codec) and
a preferred-leader election.
"""

from __future__ import annotations

import io
import socket
import struct
import time
from datetime import timedelta
from typing import Any, Protocol

from kio.schema.alter_partition_reassignments.v0 import request as reassign_request
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader, entity_writer
from kio.static.primitive import i32, i32Timedelta

from kafkatest.brokers.base import Broker
from kafkatest.emulator.protocol import frame, response_schema
from kafkatest.errors import BrokerError, UnsupportedOperation
from kafkatest.faults.validation import InvalidFault

_REASSIGN_API_KEY = 45


class NodeCluster(Protocol):
    """What a cluster backend offers the faults (EmulatorBroker, KafkaClusterBroker)."""

    @property
    def broker_ids(self) -> list[int]: ...
    def stop_node(self, broker_id: int) -> None: ...
    def start_node(self, broker_id: int) -> None: ...


def several_brokers(broker: Broker, what: str) -> NodeCluster:
    """The broker as a cluster, refusing one that has a single broker."""
    ids: list[int] = list(getattr(broker, "broker_ids", []))
    if len(ids) < 2 or not hasattr(broker, "stop_node"):
        raise UnsupportedOperation(
            f"{what} needs a cluster of several brokers: start_broker('emulator', brokers=3) "
            "or start_broker('kafka', brokers=3) (pytest: --emulator-brokers 3, "
            "--kafka-brokers 3)"
        )
    return broker  # type: ignore[return-value]


def check_broker_id(cluster: NodeCluster, action: str, broker_id: object) -> int:
    if isinstance(broker_id, bool) or not isinstance(broker_id, int):
        raise InvalidFault(f"{action}: broker_id must be an int, not {broker_id!r}")
    if broker_id not in cluster.broker_ids:
        raise InvalidFault(
            f"{action}: there is no broker {broker_id}; brokers are {cluster.broker_ids}"
        )
    return broker_id


def move_leader_on_kafka(
    broker: Broker, topic: str, partition: int, to_broker: int | None, timeout_s: float = 60.0
) -> tuple[int, int]:
    """Make `to_broker` (default: the next running broker) lead; returns (old, new)."""
    replicas, leader = _describe(broker, topic, partition)
    running = sorted(broker.admin().list_topics(timeout=10).brokers)
    if to_broker is None:
        later = [b for b in running if b > leader]
        to_broker = (later or running)[0]
    if to_broker not in running:
        raise InvalidFault(
            f"move_leader: broker {to_broker} is not running; running brokers are {running}"
        )
    if to_broker == leader:
        return leader, leader
    wanted = [to_broker, *[r for r in replicas if r != to_broker][: len(replicas) - 1]]
    if wanted != replicas:
        _reassign(broker, topic, partition, wanted)
        _wait(lambda: _describe(broker, topic, partition)[0] == wanted, timeout_s, "reassigned")
    if _describe(broker, topic, partition)[1] != to_broker:
        from confluent_kafka import ElectionType, TopicPartition

        future = broker.admin().elect_leaders(
            ElectionType.PREFERRED, [TopicPartition(topic, partition)]
        )
        for error in future.result(timeout=timeout_s).values():
            if error is not None and "not needed" not in str(error).lower():
                raise BrokerError(f"electing broker {to_broker} for {topic}[{partition}]: {error}")
    _wait(lambda: _describe(broker, topic, partition)[1] == to_broker, timeout_s, "led by it")
    return leader, to_broker


def _describe(broker: Broker, topic: str, partition: int) -> tuple[list[int], int]:
    info = broker.admin().list_topics(topic=topic, timeout=10).topics.get(topic)
    if info is None or partition not in info.partitions:
        raise InvalidFault(f"move_leader: {topic} has no partition {partition}")
    found = info.partitions[partition]
    return list(found.replicas), int(found.leader)


def _wait(condition: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise BrokerError(f"move_leader: the partition was not {what} within {timeout_s:.0f}s")
        time.sleep(0.1)


def _reassign(broker: Broker, topic: str, partition: int, replicas: list[int]) -> None:
    request = reassign_request.AlterPartitionReassignmentsRequest(
        timeout=i32Timedelta.parse(timedelta(seconds=30)),
        topics=(
            reassign_request.ReassignableTopic(
                name=topic,  # type: ignore[arg-type]
                partitions=(
                    reassign_request.ReassignablePartition(
                        partition_index=i32(partition),
                        replicas=tuple(replicas),  # type: ignore[arg-type]
                    ),
                ),
            ),
        ),
    )
    response = _ask(broker.bootstrap_servers, request)
    if response.error_code != ErrorCode.none:
        raise BrokerError(f"reassigning {topic}[{partition}]: {response.error_message}")
    for answered in response.responses:
        for result in answered.partitions:
            if result.error_code != ErrorCode.none:
                raise BrokerError(
                    f"reassigning {topic}[{partition}] to {replicas}: {result.error_message}"
                )


def _ask(bootstrap: str, request: Any) -> Any:
    """One request and its decoded response (version 0 is flexible: header v2, whose
    tag buffer follows the client id, and a response header with one too)."""
    body = io.BytesIO()
    entity_writer(type(request))(body, request)
    client_id = b"kafkatest-faults"
    header = struct.pack(">hhih", _REASSIGN_API_KEY, 0, 1, len(client_id)) + client_id + b"\0"
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(frame(header + body.getvalue()))
        size = struct.unpack(">i", _read(sock, 4))[0]
        reply = _read(sock, size)
    schema = response_schema(_REASSIGN_API_KEY, 0)
    assert schema is not None
    return entity_reader(schema)(reply, 5)[0]  # after the correlation id and tag buffer


def _read(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise BrokerError("the broker closed the connection during a reassignment")
        data += chunk
    return data
