"""The pre-decoding guard accepts every well-formed request of every schema kio has.

The guard walks kio's dataclasses itself, so a disagreement with kio's encoding
(a field it sizes wrongly, a nullability it misreads) would refuse real clients.
Hypothesis builds requests of every API key and version, kio encodes them, and the
guard must read each to its last byte without a rewrite; the same requests with
hostile counts in them are refused without allocating.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st
from kio.serial import entity_writer
from kio.static.primitive import Records

from kafkatest.emulator.protocol.guard import checked_frame, scan
from kafkatest.emulator.protocol.messages import decode_request, request_schema
from kafkatest.emulator.protocol.primitives import DecodeError
from kafkatest.emulator.server.handlers import load_handlers
from kafkatest.kio_codec import register_hypothesis_strategies

register_hypothesis_strategies()
st.register_type_strategy(Records, st.binary(max_size=32).map(Records))


def _served_request_schemas() -> list[Any]:
    """Every request schema the emulator decodes: each version of each API it serves."""
    found = []
    for spec in sorted(load_handlers().values(), key=lambda s: s.api_key):
        for version in range(spec.min_version, spec.max_version + 1):
            schema = request_schema(spec.api_key, version)
            if schema is not None:
                found.append(schema)
    return found


SCHEMAS = _served_request_schemas()


def _encode(entity: Any) -> bytes:
    buffer = io.BytesIO()
    entity_writer(type(entity))(buffer, entity)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "schema", SCHEMAS, ids=[f"{s.__api_key__}-v{s.__version__}" for s in SCHEMAS]
)
def test_every_well_formed_request_passes_unchanged(schema: Any) -> None:
    @settings(
        max_examples=3,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.from_type(schema))
    def check(entity: Any) -> None:
        body = _encode(entity)
        assert scan(schema, body, 0) == (len(body), [])

    check()


def test_every_served_api_has_its_schemas_checked() -> None:
    served = {
        (s.api_key, v)
        for s in load_handlers().values()
        for v in range(s.min_version, s.max_version + 1)
    }
    assert {(s.__api_key__, s.__version__) for s in SCHEMAS} == served


@pytest.mark.parametrize(
    ("api_key", "version", "body", "message"),
    [
        (3, 12, bytes.fromhex("ffffffff07010000"), "tried to allocate a collection of size"),
        (3, 4, bytes.fromhex("7fffffff01"), "tried to allocate a collection of size"),
        (20, 4, bytes.fromhex("000000753000"), "non-nullable field"),
        (
            3,
            12,
            bytes.fromhex("0200000000000000000000000000000000") + b"\x81\x80\x02",
            "invalid length",
        ),
        (3, 12, bytes.fromhex("01010001ffffffffff01"), "varint is too long"),
    ],
    ids=["compact-count", "legacy-count", "null", "string-over-32767", "six-byte-varint"],
)
def test_hostile_bodies_are_refused_with_kafkas_reason(
    api_key: int, version: int, body: bytes, message: str
) -> None:
    schema = request_schema(api_key, version)
    assert schema is not None
    with pytest.raises(DecodeError, match=message):
        decode_request(schema, body, 0)


def test_encodings_kafka_reads_differently_are_rewritten_to_what_kafka_reads() -> None:
    schema = request_schema(3, 4)  # Metadata v4: legacy array, then a boolean
    assert schema is not None
    # A legacy count of -7 is null to Kafka; a boolean byte of 7 is true.
    body = bytes.fromhex("fffffff907")
    assert checked_frame(schema, body, 0) == bytes.fromhex("ffffffff01")
    request = decode_request(schema, body, 0)
    assert request.topics is None and request.allow_auto_topic_creation is True
