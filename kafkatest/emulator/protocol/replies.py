"""A response as the buffers to send: stored record batches are never copied into it.

A Fetch response is mostly the log's own batches. Encoding it into one byte string
copies them several times (joined per partition, into the encoder's buffer, out of
it, behind the header, behind the size); here the encoder's small fields are
gathered into one buffer that starts with room for the frame's size and the
response header, and every large piece (a stored batch, a big field) is kept by
reference. The transport then sends the list as it is.

An answer that repeats one entity many times (a DescribeConfigs naming one
resource 10,000 times gets 10,000 copies of its result) is built with
`EncodedItems`: each distinct entity is encoded once, by the handler, and the
reply refers to that encoding wherever the entity stands.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any, cast

from kio.serial import entity_writer

_SIZE = struct.Struct(">i")
#: Pieces at least this large are kept by reference; smaller ones are gathered.
LARGE_PIECE = 4096

#: A framed reply: its buffers in order, the first starting with the frame's size.
Reply = list[bytes | bytearray | memoryview]


class StoredRecords:
    """A Fetch partition's `records`: the stored batches, sent as they are.

    kio's writer asks for `len()` and passes the value to the buffer's `write`,
    which `ScatterWriter` recognises; nothing else ever encodes it.
    """

    __slots__ = ("batches", "size")

    def __init__(self, batches: Sequence[bytes]) -> None:
        self.batches = batches
        self.size = sum(len(batch) for batch in batches)

    def __len__(self) -> int:
        return self.size

    def __bytes__(self) -> bytes:
        return b"".join(self.batches)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StoredRecords):
            return bytes(self) == bytes(other)
        if isinstance(other, (bytes, bytearray, memoryview)):
            return bytes(self) == bytes(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class ScatterWriter:
    """kio's `Writable`: small writes gathered, large pieces kept by reference."""

    def __init__(self, prefix: bytes = b"") -> None:
        self._parts: Reply = []
        self._small = bytearray(prefix)
        self.size = len(prefix)

    def write(self, data: Any) -> int:
        size = len(data)
        self.size += size
        if isinstance(data, StoredRecords):
            for batch in data.batches:
                self._add(batch)
        else:
            self._add(data)
        return size

    def _add(self, piece: Any) -> None:
        if len(piece) < LARGE_PIECE:
            self._small += piece
            return
        if self._small:
            self._parts.append(self._small)
            self._small = bytearray()
        self._parts.append(piece)

    def parts(self) -> Reply:
        if self._small or not self._parts:
            self._parts.append(self._small)
            self._small = bytearray()
        return self._parts


#: The writer `write_entity` is encoding into, for `EncodedItems` to write to.
_WRITING: ContextVar[ScatterWriter | None] = ContextVar("kafkatest_reply_writing", default=None)


class EncodedItems(tuple):  # type: ignore[type-arg]  # tuple[Any, ...], with encodings
    """An array field's entities, each with its encoding when the handler made one.

    Anywhere else it is the plain tuple of entities (tests read it, `==` compares
    it, `+` extends it); while `write_entity` encodes the response, kio's array
    writer, which takes the count and then iterates, gets nothing from the
    iteration: the items are written straight to the reply's writer instead, an
    encoding by reference (the same bytes object for every repeat of an entity)
    and an item without one (None) through kio.
    """

    pieces: tuple[bytes | None, ...]

    def __new__(cls, items: Iterable[Any], pieces: Iterable[bytes | None]) -> EncodedItems:
        self = super().__new__(cls, items)
        self.pieces = tuple(pieces)
        if len(self.pieces) != len(self):
            raise ValueError(f"{len(self)} items but {len(self.pieces)} encodings")
        return self

    def __iter__(self) -> Iterator[Any]:
        writer = _WRITING.get()
        if writer is None:
            return super().__iter__()
        for item, piece in zip(super().__iter__(), self.pieces, strict=True):
            if piece is None:
                entity_writer(type(item))(cast(Any, writer), item)
            else:
                writer.write(piece)
        return iter(())

    def __add__(self, other: Any) -> EncodedItems:
        more = tuple(other)
        return EncodedItems((*super().__iter__(), *more), (*self.pieces, *(None,) * len(more)))


def write_entity(writer: ScatterWriter, entity: Any) -> None:
    """Encode `entity` into `writer` (`EncodedItems` in it write their encodings)."""
    token = _WRITING.set(writer)
    try:
        entity_writer(type(entity))(cast(Any, writer), entity)  # a duck-typed Writable
    finally:
        _WRITING.reset(token)


def encode_reply(header: bytes, response: Any) -> Reply:
    """`response` framed behind `header`: the size, the header, the body's buffers."""
    writer = ScatterWriter(b"\0\0\0\0" + header)
    write_entity(writer, response)
    parts = writer.parts()
    first = parts[0]
    assert isinstance(first, bytearray)  # the gathered buffer holding the size's room
    _SIZE.pack_into(first, 0, writer.size - 4)
    return parts


def reply_bytes(reply: Reply) -> bytes:
    """The reply as one byte string (tests, and the rare caller that needs it)."""
    return b"".join(reply)
