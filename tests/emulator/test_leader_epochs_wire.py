"""Leader epochs over the wire: bumped by leader moves and restarts, fenced, and answered.

Java consumers (Spark's executors) and librdkafka carry the leader epoch they know
in Fetch and ListOffsets, and check their position with OffsetForLeaderEpoch when
it changes; Kafka fences stale epochs and stamps every appended batch with the
leader's epoch. A two-broker emulator moves one partition's leader and is asked
over a bare socket; the restart test runs on every backend.
"""

from __future__ import annotations

import datetime
import socket
import struct
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from kio.index import load_payload_module
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v12.request import FetchPartition, FetchRequest, FetchTopic
from kio.schema.list_offsets.v7.request import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.schema.offset_for_leader_epoch.v4.request import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from kio.serial import entity_reader
from kio.static.constants import EntityType
from raw_client import encode, read_frame, request_frame

from kafkatest import Broker, Record
from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.emulator.protocol.batches import split_batches
from kafkatest.faults import Faults, faults_for

LATEST, EARLIEST = -1, -2


@pytest.fixture(scope="module")
def two_brokers() -> Iterator[EmulatorBroker]:
    with EmulatorBroker(brokers=2) as broker:  # started here, closed (faults and all) at exit
        yield broker


def ask(address: str, api_key: int, version: int, request: Any, response: str) -> Any:
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(request_frame(api_key, version, 5, encode(request)))
        reply = read_frame(sock)
    assert reply is not None and struct.unpack(">i", reply[:4])[0] == 5
    types = load_payload_module(api_key, version, EntityType.response)
    return entity_reader(getattr(types, response))(reply, 5)[0]


def leader_address(broker: EmulatorBroker, topic: str) -> tuple[int, str, str]:
    """(leader id, its address, the other broker's address) for partition 0."""

    def find() -> tuple[int, str, str]:
        state = broker.state
        leader = state.topics.get(topic).partition(0).leader_id
        other = next(b for b in state.cluster.broker_ids if b != leader)
        return (
            leader,
            _address(state.cluster.address(leader)),
            _address(state.cluster.address(other)),
        )

    return broker.call(find)


def _address(host_port: tuple[str, int]) -> str:
    return f"{host_port[0]}:{host_port[1]}"


def metadata_epoch(address: str, topic: str) -> tuple[int, int]:
    request = MetadataRequest(
        topics=(MetadataRequestTopic(name=topic, topic_id=None),),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    [answer] = ask(address, 3, 12, request, "MetadataResponse").topics
    [partition] = answer.partitions
    return partition.leader_id, partition.leader_epoch


def fetch(address: str, topic: str, current_epoch: int, offset: int = 0) -> Any:
    request = FetchRequest(
        cluster_id=None,
        replica_id=-1,
        max_wait=datetime.timedelta(milliseconds=0),
        min_bytes=0,
        max_bytes=1 << 20,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=(
            FetchTopic(
                topic=topic,
                partitions=(
                    FetchPartition(
                        partition=0,
                        current_leader_epoch=current_epoch,
                        fetch_offset=offset,
                        last_fetched_epoch=-1,
                        log_start_offset=-1,
                        partition_max_bytes=1 << 20,
                    ),
                ),
            ),
        ),
        forgotten_topics_data=(),
        rack_id="",
    )
    [answer] = ask(address, 1, 12, request, "FetchResponse").responses
    return answer.partitions[0]


def epoch_end(address: str, topic: str, current_epoch: int, epoch: int) -> tuple[Any, int, int]:
    asked = OffsetForLeaderPartition(
        partition=0, current_leader_epoch=current_epoch, leader_epoch=epoch
    )
    request = OffsetForLeaderEpochRequest(
        replica_id=-1, topics=(OffsetForLeaderTopic(topic=topic, partitions=(asked,)),)
    )
    found = only_partition(ask(address, 23, 4, request, "OffsetForLeaderEpochResponse"))
    return found.error_code, found.leader_epoch, found.end_offset


def list_offset(address: str, topic: str, spec: int, current_epoch: int = -1) -> tuple[Any, ...]:
    asked = ListOffsetsPartition(
        partition_index=0, current_leader_epoch=current_epoch, timestamp=spec
    )
    request = ListOffsetsRequest(
        replica_id=-1,
        isolation_level=0,
        topics=(ListOffsetsTopic(name=topic, partitions=(asked,)),),
    )
    found = only_partition(ask(address, 2, 7, request, "ListOffsetsResponse"))
    return found.error_code, found.offset, found.leader_epoch


def only_partition(response: Any) -> Any:
    [answer] = response.topics
    [found] = answer.partitions
    return found


def write(broker: Broker, topic: str, values: list[bytes]) -> None:
    broker.produce(Record(topic=topic, value=v, partition=0) for v in values)


def test_a_moved_leader_fences_old_epochs_and_answers_where_each_epoch_ended(
    two_brokers: EmulatorBroker,
) -> None:
    faults = faults_for(two_brokers)
    topic = f"epochs-{uuid.uuid4().hex[:8]}"
    two_brokers.create_topic(topic)
    write(two_brokers, topic, [b"a", b"b", b"c"])
    first, first_address, _ = leader_address(two_brokers, topic)
    assert metadata_epoch(first_address, topic) == (first, 0)

    second = faults.move_leader(topic)
    _, leader, old_leader = leader_address(two_brokers, topic)
    assert metadata_epoch(leader, topic) == (second, 1)
    write(two_brokers, topic, [b"d", b"e"])  # the producer follows the leader

    assert fetch(leader, topic, 0).error_code == ErrorCode.fenced_leader_epoch
    assert fetch(leader, topic, 2).error_code == ErrorCode.unknown_leader_epoch
    assert fetch(old_leader, topic, 1).error_code == ErrorCode.not_leader_or_follower
    served = fetch(leader, topic, 1)
    assert served.error_code == ErrorCode.none
    stamped = [(h.base_offset, h.partition_leader_epoch) for h, _ in split_batches(served.records)]
    assert stamped == [(0, 0), (3, 1)], "each batch carries the epoch it was appended in"

    # Epoch 0 ended where epoch 1 began; the current epoch ends at the log end.
    assert epoch_end(leader, topic, 1, 0) == (ErrorCode.none, 0, 3)
    assert epoch_end(leader, topic, 1, 1) == (ErrorCode.none, 1, 5)
    assert epoch_end(leader, topic, 1, 7) == (ErrorCode.none, -1, -1)
    assert epoch_end(leader, topic, 0, 0)[0] == ErrorCode.fenced_leader_epoch
    assert epoch_end(old_leader, topic, 1, 0)[0] == ErrorCode.not_leader_or_follower

    assert list_offset(leader, topic, LATEST) == (ErrorCode.none, 5, 1)
    assert list_offset(leader, topic, EARLIEST) == (ErrorCode.none, 0, 0)
    assert list_offset(leader, topic, LATEST, 0)[0] == ErrorCode.fenced_leader_epoch
    assert list_offset(leader, topic, LATEST, 3)[0] == ErrorCode.unknown_leader_epoch

    # Deleting records moves the first epoch's start with the log start. (librdkafka's
    # admin does not retry DeleteRecords at a moved leader: a fresh one asks the new.)
    two_brokers.close_clients()
    two_brokers.delete_records(topic, {0: 4})
    assert list_offset(leader, topic, EARLIEST) == (ErrorCode.none, 4, 1)
    assert epoch_end(leader, topic, 1, 0) == (ErrorCode.none, 0, 4)

    # Putting the leader back is another election; a recreated topic starts at 0.
    faults.clear()
    _, back, _ = leader_address(two_brokers, topic)
    assert metadata_epoch(back, topic) == (first, 2)
    faults.recreate_topic(topic)
    _, fresh, _ = leader_address(two_brokers, topic)
    assert metadata_epoch(fresh, topic)[1] == 0
    two_brokers.delete_topic(topic)


def test_librdkafka_consumer_follows_a_moved_leader(two_brokers: EmulatorBroker) -> None:
    faults = faults_for(two_brokers)
    topic = f"epochs-rdkafka-{uuid.uuid4().hex[:8]}"
    two_brokers.create_topic(topic)
    write(two_brokers, topic, [b"0", b"1", b"2"])
    consumer = Consumer(
        {
            "bootstrap.servers": two_brokers.bootstrap_servers,
            "group.id": topic,
            "enable.auto.commit": False,
            "auto.offset.reset": "error",
            "topic.metadata.refresh.interval.ms": 200,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        got = _consume(consumer, 3)
        faults.move_leader(topic)
        write(two_brokers, topic, [b"3", b"4"])
        got += _consume(consumer, 2)
        assert got == [b"0", b"1", b"2", b"3", b"4"]
    finally:
        consumer.close()
        faults.clear()
        two_brokers.delete_topic(topic)


def _consume(consumer: Consumer, count: int) -> list[bytes]:
    out: list[bytes] = []
    for _ in range(200):
        for message in consumer.consume(count - len(out), timeout=0.1):
            assert message.error() is None, message.error()
            out.append(message.value())
        if len(out) == count:
            return out
    raise AssertionError(f"consumed {out} of {count}")


def test_a_restarted_broker_leads_two_epochs_later(
    kafka_broker: Broker, kafka_faults: Faults
) -> None:
    """Kafka (one node) takes a partition leaderless at shutdown and back at start-up."""
    topic = f"epochs-restart-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(topic)
    try:
        address = kafka_broker.bootstrap_servers.split(",")[0]
        assert metadata_epoch(address, topic)[1] == 0
        kafka_faults.restart()
        assert metadata_epoch(address, topic)[1] == 2
    finally:
        kafka_broker.delete_topic(topic)
