"""A raw connection to a group coordinator for the group wire tests: exact API
versions, one request at a time, as a member would take the protocol's steps."""

from __future__ import annotations

import datetime
import socket
import struct
import time
import uuid
from typing import Any

from kio.index import load_payload_module
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader
from kio.static.constants import EntityType
from raw_client import encode, read_frame, request_frame

from kafkatest import Broker
from kafkatest.emulator.server.responses import make

HEARTBEAT, DESCRIBE = 68, 69
COMMIT, JOIN, LIST_GROUPS, DESCRIBE_GROUPS, FIND_COORDINATOR, METADATA, FETCH = (
    8,
    11,
    16,
    15,
    10,
    3,
    9,
)
OFFSET_DELETE, DELETE_GROUPS, SYNC = 47, 42, 14
CLASSIC_HEARTBEAT, LEAVE = 12, 13
_NAMES = {
    HEARTBEAT: "ConsumerGroupHeartbeat",
    DESCRIBE: "ConsumerGroupDescribe",
    COMMIT: "OffsetCommit",
    JOIN: "JoinGroup",
    LIST_GROUPS: "ListGroups",
    DESCRIBE_GROUPS: "DescribeGroups",
    FIND_COORDINATOR: "FindCoordinator",
    METADATA: "Metadata",
    FETCH: "OffsetFetch",
    OFFSET_DELETE: "OffsetDelete",
    DELETE_GROUPS: "DeleteGroups",
    SYNC: "SyncGroup",
    CLASSIC_HEARTBEAT: "Heartbeat",
    LEAVE: "LeaveGroup",
}
COORDINATOR_LOADING = (
    ErrorCode.coordinator_not_available,
    ErrorCode.not_coordinator,
    ErrorCode.coordinator_load_in_progress,
)
REBALANCE_TIMEOUT_MS = 300_000


class Session:
    """One connection to a group's coordinator, speaking exact API versions."""

    def __init__(self, address: str) -> None:
        host, port = address.rsplit(":", 1)
        self.address = address
        self._sock = socket.create_connection((host, int(port)), timeout=10)
        self._correlation = 0

    def close(self) -> None:
        self._sock.close()

    def sibling(self, prefix: str) -> str:
        """A group id this session's broker coordinates too (with several brokers, most
        ids belong to another one)."""
        for index in range(1000):
            candidate = f"{prefix}-{index}"
            found = self.call(FIND_COORDINATOR, 3, key=candidate, key_type=0)
            if found.error_code == ErrorCode.none and f"{found.host}:{found.port}" == self.address:
                return candidate
        raise AssertionError(f"no group id like {prefix} is coordinated by {self.address}")

    def call(self, api_key: int, version: int, **fields: Any) -> Any:
        name = _NAMES[api_key]
        request_types = load_payload_module(api_key, version, EntityType.request)
        body = encode(make(getattr(request_types, f"{name}Request"), **fields))
        self._correlation += 1
        self._sock.sendall(request_frame(api_key, version, self._correlation, body))
        reply = read_frame(self._sock)
        assert reply is not None, f"API {api_key} v{version}: connection closed"
        assert struct.unpack(">i", reply[:4])[0] == self._correlation
        response_cls = getattr(
            load_payload_module(api_key, version, EntityType.response), f"{name}Response"
        )
        return entity_reader(response_cls)(reply, 5 if response_cls.__flexible__ else 4)[0]

    def heartbeat(
        self,
        group: str,
        member_id: str,
        epoch: int,
        owned: dict[uuid.UUID, list[int]] | None = None,
        version: int = 1,
        **fields: Any,
    ) -> Any:
        """A heartbeat; epoch 0 joins with `fields` (topics, regex, assignor)."""
        types = load_payload_module(HEARTBEAT, version, EntityType.request)
        partitions = None
        if owned is not None:
            partitions = tuple(
                types.TopicPartitions(topic_id=t, partitions=tuple(p)) for t, p in owned.items()
            )
        joining = epoch == 0
        values: dict[str, Any] = {
            "group_id": group,
            "member_id": member_id,
            "member_epoch": epoch,
            "rebalance_timeout": REBALANCE_TIMEOUT_MS if joining else -1,
            "topic_partitions": () if joining and owned is None else partitions,
            **fields,
        }
        values["rebalance_timeout"] = millis(values["rebalance_timeout"])
        return self.call(HEARTBEAT, version, **values)


def millis(ms: int) -> datetime.timedelta:
    return datetime.timedelta(milliseconds=ms)


def coordinator(broker: Broker, group: str) -> str:
    """The group's coordinator, once it is ready (Kafka creates __consumer_offsets first)."""
    deadline = time.monotonic() + 60
    bootstrap = Session(broker.bootstrap_servers.split(",")[0])
    try:
        while True:
            found = bootstrap.call(FIND_COORDINATOR, 3, key=group, key_type=0)
            if found.error_code == ErrorCode.none:
                return f"{found.host}:{found.port}"
            assert found.error_code in COORDINATOR_LOADING, found
            assert time.monotonic() < deadline, found
            time.sleep(0.2)
    finally:
        bootstrap.close()


def ready_session(broker: Broker, group: str) -> Session:
    """A session with the group's coordinator once it answers for the group: the first
    request after __consumer_offsets appears may still find it loading on Kafka."""
    opened = Session(coordinator(broker, group))
    deadline = time.monotonic() + 60
    while True:
        probe = opened.call(DESCRIBE, 1, group_ids=(group,), include_authorized_operations=False)
        if probe.groups[0].error_code not in COORDINATOR_LOADING:
            return opened
        assert time.monotonic() < deadline, probe
        time.sleep(0.2)


def assignable(session: Session, topic: str) -> None:
    """Wait until the group coordinator can assign `topic`: Kafka's coordinator learns of
    a new topic a moment after its creation returns, and a member joining before that
    gets nothing at first. A throwaway member joins until it is given the topic."""
    probe, member = session.sibling(f"probe-{uuid.uuid4().hex[:8]}"), new_member()
    response = session.heartbeat(probe, member, 0, subscribed_topic_names=(topic,))
    deadline = time.monotonic() + 60
    while not response.assignment or not response.assignment.topic_partitions:
        assert time.monotonic() < deadline, f"{topic} never became assignable"
        time.sleep(0.2)
        response = session.heartbeat(probe, member, response.member_epoch)
    session.heartbeat(probe, member, -1)


def topic_id(session: Session, topic: str) -> uuid.UUID:
    assignable(session, topic)
    return known_topic_id(session, topic)


def known_topic_id(session: Session, topic: str) -> uuid.UUID:
    """The topic's id, as Metadata gives it to this session's principal."""
    types = load_payload_module(METADATA, 12, EntityType.request)
    metadata = session.call(
        METADATA,
        12,
        topics=(types.MetadataRequestTopic(topic_id=None, name=topic),),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    found: uuid.UUID = metadata.topics[0].topic_id
    return found


def commit_offset(session: Session, group: str, topic: str, member: str, epoch: int) -> ErrorCode:
    """OffsetCommit v9 of offset 0 of partition 0 as `member` at `epoch`: its error."""
    types = load_payload_module(COMMIT, 9, EntityType.request)
    partition = types.OffsetCommitRequestPartition(
        partition_index=0, committed_offset=0, committed_leader_epoch=-1, committed_metadata=""
    )
    response = session.call(
        COMMIT,
        9,
        group_id=group,
        generation_id_or_member_epoch=epoch,
        member_id=member,
        group_instance_id=None,
        topics=(types.OffsetCommitRequestTopic(name=topic, partitions=(partition,)),),
    )
    error: ErrorCode = response.topics[0].partitions[0].error_code
    return error


def assigned(response: Any) -> dict[uuid.UUID, list[int]] | None:
    if response.assignment is None:
        return None
    return {tp.topic_id: sorted(tp.partitions) for tp in response.assignment.topic_partitions}


def new_member() -> str:
    return str(uuid.uuid4())


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def subscription(topics: list[str], owned: dict[str, list[int]] | None = None) -> bytes:
    """A classic member's ConsumerProtocolSubscription v3, as kafka-clients writes it."""
    body = struct.pack(">hi", 3, len(topics)) + b"".join(_string(t) for t in topics)
    body += struct.pack(">i", -1)  # no user data
    owned = owned or {}
    body += struct.pack(">i", len(owned))
    for topic, partitions in owned.items():
        body += _string(topic) + struct.pack(f">i{len(partitions)}i", len(partitions), *partitions)
    return body + struct.pack(">ih", -1, -1)  # generation id, no rack


def assignment(partitions: dict[str, list[int]], user_data: bytes | None = None) -> bytes:
    """A ConsumerProtocolAssignment v3 giving `partitions`, as a classic leader sends it
    (a custom assignor may add user data)."""
    body = struct.pack(">hi", 3, len(partitions))
    for topic, numbers in partitions.items():
        body += _string(topic) + struct.pack(f">i{len(numbers)}i", len(numbers), *numbers)
    if user_data is None:
        return body + struct.pack(">i", -1)
    return body + struct.pack(">i", len(user_data)) + user_data


def assigned_partitions(raw: bytes) -> tuple[int, dict[str, list[int]]]:
    """(version, topic -> partitions) of a ConsumerProtocolAssignment."""
    version, count = struct.unpack_from(">hi", raw, 0)
    offset, found = 6, {}
    for _ in range(count):
        (length,) = struct.unpack_from(">h", raw, offset)
        topic = raw[offset + 2 : offset + 2 + length].decode()
        offset += 2 + length
        (n,) = struct.unpack_from(">i", raw, offset)
        found[topic] = sorted(struct.unpack_from(f">{n}i", raw, offset + 4))
        offset += 4 + 4 * n
    return version, found
