"""No request holds the loop every client shares while it works through its entries.

Every connection of every emulated broker is served on one asyncio loop inside the
test process. A request whose work grows with a count the client chose (a
ListOffsets naming a partition 1,000 times, a Metadata naming a topic 100,000
times: issue 44) must give that loop back as it goes, and a naming repeated must
not repeat the work. These tests pin that structure, not a time: with the pacing
slice at zero, every unit of paced work lets the other tasks run.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from inflated_requests import NAME, inflated, inflated_frame
from kio.schema.errors import ErrorCode
from kio.schema.list_offsets.v7.request import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from kio.schema.list_offsets.v7.response import ListOffsetsResponse
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.schema.metadata.v12.response import MetadataResponse
from kio.serial import entity_reader
from kio.static.primitive import i8, i32, i64
from raw_client import encode, request_frame

from kafkatest.emulator.protocol.messages import request_schema
from kafkatest.emulator.protocol.replies import reply_bytes
from kafkatest.emulator.server import pacing
from kafkatest.emulator.server.dispatch import CloseConnection, Dispatcher
from kafkatest.emulator.server.faults import NoFaults
from kafkatest.emulator.server.handlers import load_handlers, metadata as metadata_module
from kafkatest.emulator.state import EmulatorState, log as log_module

NAMINGS = 1_000

#: APIs whose handler works through a request's entries without pausing, and why
#: that holds the loop no longer than decoding the request did (its bytes bound it).
UNPACED: dict[int, str] = {
    1: "Fetch: each partition's read is bounded by the request's and the partition's byte limits",
    11: "JoinGroup: the protocols are stored as they came, one pass",
    12: "Heartbeat: no array",
    14: "SyncGroup: the assignments are stored as they came, one pass",
    16: "ListGroups: the filters are sets; the work is the broker's groups",
    17: "SaslHandshake: no array",
    18: "ApiVersions: no array",
    22: "InitProducerId: no array",
    25: "AddOffsetsToTxn: no array",
    26: "EndTxn: no array",
    29: "DescribeAcls: one filter",
    35: "DescribeLogDirs: the names asked are a set; the work is the broker's partitions",
    36: "SaslAuthenticate: no array",
    38: "CreateDelegationToken: the renewers are stored as they came",
    39: "RenewDelegationToken: no array",
    40: "ExpireDelegationToken: no array",
    41: "DescribeDelegationToken: the owners are a set",
    46: "ListPartitionReassignments: always answers none",
    48: "DescribeClientQuotas: one filter's components, one pass",
    57: "UpdateFeatures: one check per feature, one pass",
    60: "DescribeCluster: no array",
    64: "UnregisterBroker: no array",
    66: "ListTransactions: the filters are sets",
    68: "ConsumerGroupHeartbeat: the subscription is a set of names",
    74: "ListConfigResources: the types asked are a set",
    76: "share groups are off: one error answers the request",
    78: "share groups are off: one error answers the request",
    79: "share groups are off: one error answers the request",
    80: "AddRaftVoter: no array",
    81: "RemoveRaftVoter: no array",
    88: "streams groups are off: one error answers the request",
    91: "share groups are off: one error answers the request",
    92: "share groups are off: one error answers the request",
}
#: Valid enum values for the ACL APIs' entries (0 is UNKNOWN, which Kafka refuses whole).
_ACL_FIELDS = {
    30: {"resource_type": 2, "resource_pattern_type": 3, "operation": 3, "permission_type": 3},
    31: {"resource_type_filter": 1, "pattern_type_filter": 1, "operation": 1, "permission_type": 1},
}


@pytest.fixture(autouse=True)
def every_unit_breathes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pacing yields after every unit of work (its slice is 0 s), whatever the machine."""
    monkeypatch.setattr(pacing, "SLICE_S", 0.0)


def _dispatcher() -> Dispatcher:
    state = EmulatorState()
    state.cluster.set_address(1, "127.0.0.1", 9092)
    state.create_topic(NAME, partitions=2)
    return Dispatcher(state, 1, NoFaults())


async def _handle_beside_another_client(dispatcher: Dispatcher, frame: bytes) -> tuple[int, Any]:
    """(how often another task ran while `frame` was handled, the reply)."""
    ran = 0

    async def other_client() -> None:
        nonlocal ran
        while True:
            ran += 1
            await asyncio.sleep(0)

    ticker = asyncio.get_running_loop().create_task(other_client())
    await asyncio.sleep(0)
    before = ran
    try:
        reply = await dispatcher.handle(frame, "test", 1)
    finally:
        ticker.cancel()
    return ran - before, reply


def _paced_apis() -> list[int]:
    return sorted(key for key in load_handlers() if key not in UNPACED)


@pytest.mark.parametrize("api_key", _paced_apis())
def test_each_api_gives_the_loop_back_while_it_works_through_its_entries(api_key: int) -> None:
    version = load_handlers()[api_key].max_version
    schema = request_schema(api_key, version)
    assert schema is not None
    fields = _ACL_FIELDS.get(api_key)
    if fields is None:
        frame = inflated_frame(api_key, version, 50)
    else:
        frame = request_frame(api_key, version, 7, encode(_with(inflated(schema, 50), fields)))[4:]
    try:
        ran, _reply = asyncio.run(_handle_beside_another_client(_dispatcher(), frame))
    except CloseConnection as exc:  # pragma: no cover - the assertion says which
        pytest.fail(f"API {api_key} refused the request: {exc}")
    assert ran > 0, f"API {api_key} held the loop through 50 entries"


def _with(entity: Any, fields: dict[str, int]) -> Any:
    """`entity` with each named field, at any depth, set to the given value."""
    import dataclasses

    changes: dict[str, Any] = {}
    for field in dataclasses.fields(entity):
        value = getattr(entity, field.name)
        if field.name in fields:
            changes[field.name] = type(value)(fields[field.name])
        elif isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
            changes[field.name] = tuple(_with(item, fields) for item in value)
    return dataclasses.replace(entity, **changes)


def test_the_unpaced_table_names_only_apis_the_emulator_serves() -> None:
    assert set(UNPACED) <= set(load_handlers())


def _answer(reply: Any, schema: type) -> Any:
    """A flexible reply decoded: after its size, correlation id and tagged fields."""
    return entity_reader(schema)(reply_bytes(reply), 4 + 4 + 1)[0]


def test_a_topic_named_many_times_is_described_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kafka answers the set of topics named (KafkaApis: `topics.asScala.toSet`)."""
    described: list[str] = []
    original = metadata_module.describe_topic

    def counting(types: Any, topic: Any, *args: Any) -> Any:
        described.append(topic.name)
        return original(types, topic, *args)

    monkeypatch.setattr(metadata_module, "describe_topic", counting)
    request = MetadataRequest(
        topics=(MetadataRequestTopic(topic_id=None, name=NAME),) * NAMINGS,
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    frame = request_frame(3, 12, 7, encode(request))[4:]
    ran, reply = asyncio.run(_handle_beside_another_client(_dispatcher(), frame))
    assert ran > 0
    assert described == [NAME]
    answer = _answer(reply, MetadataResponse)
    assert [t.name for t in answer.topics] == [NAME]


def test_a_partition_named_many_times_is_refused_without_a_lookup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Kafka 4.1 answers a partition named more than once INVALID_REQUEST, once."""
    decoded: list[int] = []
    monkeypatch.setattr(log_module, "record_timestamps", lambda *a: decoded.append(1) or ())
    partition = ListOffsetsPartition(
        partition_index=i32(0), current_leader_epoch=i32(-1), timestamp=i64(0)
    )
    other = ListOffsetsPartition(
        partition_index=i32(1), current_leader_epoch=i32(-1), timestamp=i64(-1)
    )
    request = ListOffsetsRequest(
        replica_id=i32(-1),
        isolation_level=i8(0),
        topics=(ListOffsetsTopic(name=NAME, partitions=(partition,) * NAMINGS + (other,)),),
    )
    frame = request_frame(2, 7, 7, encode(request))[4:]
    ran, reply = asyncio.run(_handle_beside_another_client(_dispatcher(), frame))
    assert ran > 0
    assert decoded == []
    answer = _answer(reply, ListOffsetsResponse)
    [topic] = answer.topics
    assert [(p.partition_index, p.error_code) for p in topic.partitions] == [
        (0, ErrorCode.invalid_request),
        (1, ErrorCode.none),
    ]
