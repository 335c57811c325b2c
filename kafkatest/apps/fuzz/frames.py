"""Seed frames made by hand: what no client sends on its own.

Frames with a random header for every API key 0..80 and version -1..20 (unknown keys
and versions exercised too), and what a client sends a SASL listener before it is
authenticated: handshakes for every mechanism and an unknown one, right and wrong
PLAIN and SCRAM tokens, framed and raw. `corpus` records what real clients send.
"""

from __future__ import annotations

import random
import struct

from kafkatest.emulator.protocol import encode_uvarint
from kafkatest.security_names import MECHANISMS as SASL_MECHANISMS

_SIZE = struct.Struct(">i")


def random_header_frames(rng: random.Random, count: int) -> list[bytes]:
    """Frames whose header names any API key 0..80 and version -1..20, with a random body."""
    frames = []
    for _ in range(count):
        api_key, version = rng.randint(0, 80), rng.randint(-1, 20)
        correlation = rng.randint(0, 1 << 30)
        flexible = rng.random() < 0.7  # header v2's empty tagged-field section
        body = rng.randbytes(rng.randint(0, 64))
        frames.append(_frame_of(api_key, version, correlation, body, flexible))
    return frames


#: The user a SASL fuzz run's emulator knows (`run.SASL_EMULATOR_ARGS`).
SASL_USER, SASL_PASSWORD = "fuzz", "fuzz-secret"
_SASL_HANDSHAKE, _SASL_AUTHENTICATE, _API_VERSIONS = 17, 36, 18


def sasl_handshake_frame(mechanism: str, version: int, correlation: int = 1) -> bytes:
    """SaslHandshake v0 (raw tokens follow) or v1 (tokens in SaslAuthenticate)."""
    name = mechanism.encode()
    body = struct.pack(">h", len(name)) + name
    return _frame_of(_SASL_HANDSHAKE, version, correlation, body, flexible=False)


def sasl_frames() -> list[bytes]:
    """What a client sends a SASL listener before it is authenticated: ApiVersions,
    SaslHandshake for every mechanism (and an unknown one), SaslAuthenticate of every
    version with PLAIN and SCRAM tokens (right and wrong), and the same tokens raw, as
    they follow a v0 handshake."""
    user, password = SASL_USER.encode(), SASL_PASSWORD.encode()
    tokens = [
        b"\x00" + user + b"\x00" + password,
        b"\x00" + user + b"\x00wrong",
        user + b"\x00" + user + b"\x00" + password,
        b"n,,n=" + user + b",r=fyko+d2lbbFgONRv9qkxdawL",
        b"n,a=" + user + b",n=" + user + b",r=rOprNGfwEbeRWgbNEkqO",
        b"c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=",
        b"",
    ]
    frames = [
        _frame_of(_API_VERSIONS, 0, 1, b"", flexible=False),
        _frame_of(_API_VERSIONS, 3, 1, b"\x06fuzz\x040.1\x00", flexible=True),
    ]
    for mechanism in (*SASL_MECHANISMS, "GSSAPI"):
        frames += [sasl_handshake_frame(mechanism, version) for version in (0, 1)]
    for token in tokens:
        frames.append(_SIZE.pack(len(token)) + token)  # raw, after a v0 handshake
        for version in (0, 1):
            body = _SIZE.pack(len(token)) + token
            frames.append(_frame_of(_SASL_AUTHENTICATE, version, 2, body, flexible=False))
        body = encode_uvarint(len(token) + 1) + token + b"\x00"
        frames.append(_frame_of(_SASL_AUTHENTICATE, 2, 2, body, flexible=True))
    return frames


def _frame_of(api_key: int, version: int, correlation: int, body: bytes, flexible: bool) -> bytes:
    header = struct.pack(">hhih", api_key, version, correlation, 4) + b"fuzz"
    if flexible:
        header += b"\x00"
    return _SIZE.pack(len(header) + len(body)) + header + body
