"""Every advertised version of every group API, over a bare socket.

Real clients only exercise the versions they prefer (librdkafka JoinGroup v5,
kafka-python v7, ...); this walks each advertised version so that a field a
version lacks or makes nullable cannot break the encoding unnoticed.
"""

from __future__ import annotations

import datetime
import socket
import struct
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from kio.index import load_payload_module
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader
from kio.static.constants import EntityType
from raw_client import connect, encode, read_frame, request_frame

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.emulator.server.responses import make
from tests.emulator.groups_conftest_helpers import eventually, unique

JOIN, SYNC, HEARTBEAT, LEAVE = 11, 14, 12, 13
COMMIT, FETCH, LIST, DESCRIBE, DELETE = 8, 9, 16, 15, 42
SESSION = datetime.timedelta(milliseconds=6000)


class RawSession:
    """One connection speaking exact API versions, with kio entities both ways."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._correlation = 0

    @staticmethod
    def types(api_key: int, version: int) -> ModuleType:
        return load_payload_module(api_key, version, EntityType.request)

    def call(self, api_key: int, version: int, **fields: Any) -> Any:
        request_cls = self.types(api_key, version).__dict__[_request_name(api_key)]
        self._correlation += 1
        body = encode(make(request_cls, **fields))
        self._sock.sendall(request_frame(api_key, version, self._correlation, body))
        reply = read_frame(self._sock)
        assert reply is not None, f"API {api_key} v{version}: connection closed"
        assert struct.unpack(">i", reply[:4])[0] == self._correlation
        response_module = load_payload_module(api_key, version, EntityType.response)
        response_cls = response_module.__dict__[
            _request_name(api_key).replace("Request", "Response")
        ]
        offset = 5 if response_cls.__flexible__ else 4
        response, _ = entity_reader(response_cls)(reply, offset)
        return response

    def join(self, version: int, group: str, member_id: str = "") -> Any:
        types = self.types(JOIN, version)
        protocol = types.JoinGroupRequestProtocol(name="range", metadata=b"\x00\x01")
        return self.call(
            JOIN,
            version,
            group_id=group,
            session_timeout=SESSION,
            rebalance_timeout=SESSION,
            member_id=member_id,
            group_instance_id=None,
            protocol_type="consumer",
            protocols=(protocol,),
            reason=None,
        )

    def joined_member(self, group: str, version: int = 5) -> Any:
        """A member that has completed its join (gen 1, leader), not yet synced."""
        first = self.join(version, group)
        if first.error_code == ErrorCode.member_id_required:
            first = self.join(version, group, first.member_id)
        assert first.error_code == ErrorCode.none
        return first


def _request_name(api_key: int) -> str:
    return {
        JOIN: "JoinGroupRequest",
        SYNC: "SyncGroupRequest",
        HEARTBEAT: "HeartbeatRequest",
        LEAVE: "LeaveGroupRequest",
        COMMIT: "OffsetCommitRequest",
        FETCH: "OffsetFetchRequest",
        LIST: "ListGroupsRequest",
        DESCRIBE: "DescribeGroupsRequest",
        DELETE: "DeleteGroupsRequest",
    }[api_key]


@pytest.fixture
def raw(emulator: EmulatorBroker) -> Iterator[RawSession]:
    with connect(emulator.bootstrap_servers) as sock:
        yield RawSession(sock)


@pytest.mark.parametrize("version", range(10))
def test_join_group(raw: RawSession, version: int) -> None:
    group = unique("join")
    first = raw.join(version, group)
    if version >= 4:
        assert first.error_code == ErrorCode.member_id_required
        assert first.member_id
        first = raw.join(version, group, first.member_id)
    assert first.error_code == ErrorCode.none
    assert (first.generation_id, first.leader, first.protocol_name) == (1, first.member_id, "range")
    assert [(m.member_id, m.metadata) for m in first.members] == [(first.member_id, b"\x00\x01")]
    unknown = raw.join(version, group, "nobody")
    assert unknown.error_code == ErrorCode.unknown_member_id


@pytest.mark.parametrize("version", range(6))
def test_sync_group(raw: RawSession, version: int) -> None:
    group = unique("sync")
    member = raw.joined_member(group)
    types = raw.types(SYNC, version)
    assignment = types.SyncGroupRequestAssignment(member_id=member.member_id, assignment=b"mine")
    synced = raw.call(
        SYNC,
        version,
        group_id=group,
        generation_id=1,
        member_id=member.member_id,
        group_instance_id=None,
        protocol_type="consumer",
        protocol_name="range",
        assignments=(assignment,),
    )
    assert (synced.error_code, synced.assignment) == (ErrorCode.none, b"mine")


@pytest.mark.parametrize("version", range(5))
def test_heartbeat(raw: RawSession, version: int) -> None:
    group = unique("beat")
    member = raw.joined_member(group)
    fields = {"group_id": group, "member_id": member.member_id, "group_instance_id": None}
    assert raw.call(HEARTBEAT, version, generation_id=1, **fields).error_code == ErrorCode.none
    stale = raw.call(HEARTBEAT, version, generation_id=0, **fields)
    assert stale.error_code == ErrorCode.illegal_generation


@pytest.mark.parametrize("version", range(6))
def test_leave_group(raw: RawSession, version: int) -> None:
    group = unique("leave")
    member = raw.joined_member(group)
    if version < 3:
        left = raw.call(LEAVE, version, group_id=group, member_id=member.member_id)
        assert left.error_code == ErrorCode.none
        again = raw.call(LEAVE, version, group_id=group, member_id=member.member_id)
        assert again.error_code == ErrorCode.unknown_member_id
        return
    identity = raw.types(LEAVE, version).MemberIdentity
    members = (
        make(identity, member_id=member.member_id, group_instance_id=None, reason=None),
        make(identity, member_id="ghost", group_instance_id=None, reason=None),
    )
    left = raw.call(LEAVE, version, group_id=group, members=members)
    assert left.error_code == ErrorCode.none
    assert [(m.member_id, m.error_code) for m in left.members] == [
        (member.member_id, ErrorCode.none),
        ("ghost", ErrorCode.unknown_member_id),
    ]


@pytest.mark.parametrize("version", range(2, 10))
def test_offset_commit(raw: RawSession, emulator: EmulatorBroker, version: int) -> None:
    topic, group = unique("commit"), unique("committer")
    emulator.create_topic(topic, partitions=1)
    types = raw.types(COMMIT, version)

    def partition(index: int) -> Any:
        return make(
            types.OffsetCommitRequestPartition,
            partition_index=index,
            committed_offset=42,
            committed_leader_epoch=-1,
            committed_metadata="m",
        )

    topics = (types.OffsetCommitRequestTopic(name=topic, partitions=(partition(0), partition(9))),)
    committed = raw.call(
        COMMIT,
        version,
        group_id=group,
        generation_id_or_member_epoch=-1,
        member_id="",
        group_instance_id=None,
        retention_time=datetime.timedelta(milliseconds=-1),
        topics=topics,
    )
    assert [(p.partition_index, p.error_code) for p in committed.topics[0].partitions] == [
        (0, ErrorCode.none),
        (9, ErrorCode.unknown_topic_or_partition),
    ]
    assert emulator.call(lambda: emulator.state.offsets.fetch(group, topic, 0)).offset == 42


@pytest.mark.parametrize("version", range(1, 8))
def test_offset_fetch(raw: RawSession, emulator: EmulatorBroker, version: int) -> None:
    topic, group = unique("fetch"), unique("fetcher")
    emulator.create_topic(topic, partitions=2)
    commit_types = raw.types(COMMIT, 2)
    commit_partition = commit_types.OffsetCommitRequestPartition(
        partition_index=1, committed_offset=7, committed_metadata="note"
    )
    raw.call(
        COMMIT,
        2,
        group_id=group,
        generation_id_or_member_epoch=-1,
        member_id="",
        retention_time=datetime.timedelta(milliseconds=-1),
        topics=(commit_types.OffsetCommitRequestTopic(name=topic, partitions=(commit_partition,)),),
    )
    types = raw.types(FETCH, version)
    named = (types.OffsetFetchRequestTopic(name=topic, partition_indexes=(0, 1)),)
    fetched = raw.call(FETCH, version, group_id=group, topics=named, require_stable=False)
    assert [
        (p.partition_index, p.committed_offset, p.metadata, p.error_code)
        for p in fetched.topics[0].partitions
    ] == [(0, -1, "", ErrorCode.none), (1, 7, "note", ErrorCode.none)]
    if version >= 2:
        everything = raw.call(FETCH, version, group_id=group, topics=None, require_stable=False)
        assert [(t.name, [p.partition_index for p in t.partitions]) for t in everything.topics] == [
            (topic, [1])
        ]


@pytest.mark.parametrize("version", range(6))
def test_list_groups(raw: RawSession, version: int) -> None:
    group = unique("listed")
    raw.joined_member(group)
    listed = raw.call(LIST, version, states_filter=(), types_filter=())
    assert listed.error_code == ErrorCode.none
    assert group in {g.group_id for g in listed.groups}
    if version >= 4:
        stable_only = raw.call(LIST, version, states_filter=("Stable",), types_filter=())
        assert group not in {g.group_id for g in stable_only.groups}, "it is still completing"
    if version >= 5:
        classic = raw.call(LIST, version, states_filter=(), types_filter=("classic",))
        assert group in {g.group_id for g in classic.groups}
        consumer = raw.call(LIST, version, states_filter=(), types_filter=("consumer",))
        assert group not in {g.group_id for g in consumer.groups}


@pytest.mark.parametrize("version", range(7))
def test_describe_groups(raw: RawSession, version: int) -> None:
    group, missing = unique("described"), unique("missing")
    member = raw.joined_member(group)
    described = raw.call(
        DESCRIBE, version, groups=(group, missing), include_authorized_operations=False
    )
    found, absent = described.groups
    assert (found.error_code, found.group_state, found.protocol_type) == (
        ErrorCode.none,
        "CompletingRebalance",
        "consumer",
    )
    assert [m.member_id for m in found.members] == [member.member_id]
    if version >= 6:
        assert absent.error_code == ErrorCode.group_id_not_found
    else:
        assert (absent.error_code, absent.group_state) == (ErrorCode.none, "Dead")


@pytest.mark.parametrize("version", range(3))
def test_delete_groups(raw: RawSession, version: int) -> None:
    busy, idle, missing = unique("busy"), unique("idle"), unique("missing")
    raw.joined_member(busy)
    raw.call(LEAVE, 0, group_id=idle, member_id=raw.joined_member(idle).member_id)
    deleted = raw.call(DELETE, version, groups_names=(busy, idle, missing))
    assert [(r.group_id, r.error_code) for r in deleted.results] == [
        (busy, ErrorCode.non_empty_group),
        (idle, ErrorCode.none),
        (missing, ErrorCode.group_id_not_found),
    ]


def test_silent_member_expires_when_the_broker_clock_moves() -> None:
    """Session expiry runs on the broker's clock: no test has to sleep through it."""
    group = unique("silent")
    broker = EmulatorBroker()
    broker.start()
    try:
        with connect(broker.bootstrap_servers) as sock:
            raw = RawSession(sock)
            member = raw.joined_member(group)
            sync_types = raw.types(SYNC, 3)
            synced = raw.call(
                SYNC,
                3,
                group_id=group,
                generation_id=1,
                member_id=member.member_id,
                group_instance_id=None,
                assignments=(
                    sync_types.SyncGroupRequestAssignment(
                        member_id=member.member_id, assignment=b""
                    ),
                ),
            )
            assert synced.error_code == ErrorCode.none

            def state() -> str:
                described = raw.call(
                    DESCRIBE, 5, groups=(group,), include_authorized_operations=False
                )
                return str(described.groups[0].group_state)

            assert state() == "Stable"
            # Frozen, the clock moves by `advance_clock` alone: a loaded machine's seconds
            # between two statements count for nothing (on a running clock they expired
            # the member before the "not over yet" check). A heartbeat now starts the
            # session at the frozen instant.
            broker.clock.freeze()
            beat = raw.call(
                HEARTBEAT, 0, group_id=group, generation_id=1, member_id=member.member_id
            )
            assert beat.error_code == ErrorCode.none
            broker.advance_clock(SESSION // datetime.timedelta(milliseconds=1) - 1)
            assert state() == "Stable", "the session is not over yet"
            broker.advance_clock(2)
            eventually(lambda: state() == "Empty", "the silent member was expired", timeout_s=5)
            beat = raw.call(
                HEARTBEAT, 0, group_id=group, generation_id=1, member_id=member.member_id
            )
            assert beat.error_code == ErrorCode.unknown_member_id
    finally:
        broker.close()
