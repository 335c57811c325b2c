"""A seeded mutator for request frames, aimed at what once broke the emulator.

Mutations keep the frame's size prefix right (a wrong one only closes the
connection at the framing layer) and otherwise do what a broken or hostile client
does: flip bits, plant varints and int32s that mean huge or negative counts,
truncate, splice two frames, repeat a chunk.
"""

from __future__ import annotations

import random
import struct

#: Varints and ints that once aborted, hung or crashed a broker somewhere.
INTERESTING_VARINTS = (
    b"\x00",
    b"\x01",
    b"\x7f",
    b"\xff\xff\xff\xff\x0f",
    b"\xff\xff\xff\xff\x07",
    b"\x80\x80\x80\x80\x01",
    b"\xff\xff\x03",
)
INTERESTING_INT32 = (0, 1, -1, -2, 0x7FFFFFFF, -0x80000000, 1_000_000, 0xFFFF)


def mutate(rng: random.Random, frame: bytes, corpus: list[bytes]) -> bytes:
    """One to four mutations of the payload of `frame`, reframed."""
    payload = bytearray(frame[4:])
    for _ in range(rng.randint(1, 4)):
        _MUTATIONS[rng.randrange(len(_MUTATIONS))](rng, payload, corpus)
    return struct.pack(">i", len(payload)) + bytes(payload)


def _spot(rng: random.Random, payload: bytearray) -> int:
    """Somewhere after the api key and version (mostly), so the request is decoded."""
    if len(payload) <= 4 or rng.random() < 0.05:
        return rng.randint(0, len(payload))
    return rng.randint(4, len(payload))


def _flip(rng: random.Random, payload: bytearray, corpus: list[bytes]) -> None:
    if payload:
        at = rng.randrange(len(payload))
        payload[at] ^= 1 << rng.randrange(8)


def _byte(rng: random.Random, payload: bytearray, corpus: list[bytes]) -> None:
    if payload:
        payload[rng.randrange(len(payload))] = rng.choice((0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF))


def _varint(rng: random.Random, payload: bytearray, corpus: list[bytes]) -> None:
    at = _spot(rng, payload)
    planted = rng.choice(INTERESTING_VARINTS)
    if rng.random() < 0.5:
        payload[at:at] = planted
    else:
        payload[at : at + len(planted)] = planted


def _int32(rng: random.Random, payload: bytearray, corpus: list[bytes]) -> None:
    at = _spot(rng, payload)
    payload[at : at + 4] = struct.pack(">i", rng.choice(INTERESTING_INT32))


def _truncate(rng: random.Random, payload: bytearray, corpus: list[bytes]) -> None:
    del payload[_spot(rng, payload) :]


def _splice(rng: random.Random, payload: bytearray, corpus: list[bytes]) -> None:
    other = rng.choice(corpus)[4:]
    at = _spot(rng, payload)
    start = rng.randint(0, len(other))
    payload[at:] = other[start:]


def _repeat(rng: random.Random, payload: bytearray, corpus: list[bytes]) -> None:
    if len(payload) > 8:
        start = rng.randrange(len(payload) - 1)
        end = min(len(payload), start + rng.randint(1, 64))
        payload[end:end] = payload[start:end] * rng.randint(1, 8)


_MUTATIONS = (_flip, _byte, _varint, _varint, _int32, _truncate, _splice, _repeat)
