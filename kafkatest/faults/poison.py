"""Poison pills: records that look like Confluent-framed data but do not decode.

A consumer with a schema-registry deserializer (or a Spark job running ``from_avro``
after stripping the 5-byte header) meets them as a producer bug or a corrupted
upstream would leave them. Each kind breaks one layer of the frame:

- ``wrong-magic``: the first byte is not 0 (a JSON or raw producer wrote to the topic);
- ``unknown-schema-id``: magic 0 but an id no registry has (2^31-1), then a body;
- ``truncated``: magic 0 and only half a schema id, no body at all;
- ``garbage-body``: magic 0, schema id `schema_id` (a real one) and a body that is not
  a valid encoding of any record (a varint that never ends).
"""

from __future__ import annotations

from kafkatest.errors import BrokerError
from kafkatest.records import Record

KINDS = ("wrong-magic", "unknown-schema-id", "truncated", "garbage-body")
UNKNOWN_ID = 2**31 - 1
#: Bodies are bounded: a poison pill is about shape, not size.
MAX_PAYLOAD_BYTES = 1 << 20
POISON_HEADER = "kafkatest.poison"


def poison_bytes(kind: str, schema_id: int = 1) -> bytes:
    """The bytes of one `kind` of poison pill."""
    if kind == "wrong-magic":
        return b'{"not": "avro"}'
    if kind == "unknown-schema-id":
        return b"\x00" + UNKNOWN_ID.to_bytes(4, "big") + b"\x02\x02"
    if kind == "truncated":
        return b"\x00\x00\x00"
    if kind == "garbage-body":
        return b"\x00" + schema_id.to_bytes(4, "big") + b"\xff" * 12
    raise ValueError(f"poison payload {kind!r} is not one of {', '.join(KINDS)} (or pass bytes)")


def poison_records(
    topic: str,
    partition: int | None,
    payload: str | bytes,
    count: int,
    schema_id: int,
    id_prefix: str,
) -> list[Record]:
    if isinstance(payload, str):
        data, kind = poison_bytes(payload, schema_id), payload
    elif isinstance(payload, (bytes, bytearray)):
        if len(payload) > MAX_PAYLOAD_BYTES:
            raise ValueError(f"poison payload of {len(payload)} bytes is over {MAX_PAYLOAD_BYTES}")
        data, kind = bytes(payload), "bytes"
    else:
        raise ValueError(
            f"poison payload must be one of {', '.join(KINDS)} or bytes, not {payload!r}"
        )
    if not 1 <= count <= 10_000:
        raise ValueError(f"poison count must be 1..10000, not {count}")
    if not 0 <= schema_id <= UNKNOWN_ID:
        raise ValueError(f"schema_id must be 0..2^31-1, not {schema_id}")
    return [
        Record(
            topic,
            data,
            None,
            (("kafkatest.id", f"{id_prefix}{i}".encode()), (POISON_HEADER, kind.encode())),
            partition,
            None,
        )
        for i in range(count)
    ]


def check_placed(sent: list[Record], placed: list[Record]) -> None:
    if len(placed) != len(sent):
        raise BrokerError(f"poison: {len(sent)} records sent, {len(placed)} placed")
