"""Request and response headers.

Request header v1 (non-flexible APIs) is api_key, api_version, correlation_id,
client_id; v2 (flexible) adds tagged fields. client_id keeps its 2-byte length
even in v2. Response headers are v0 (correlation id) or v1 (plus tagged fields)
for flexible versions, except ApiVersions, which always answers with v0 so that a
client can read the reply before it knows which versions the broker speaks.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from kafkatest.emulator.protocol.primitives import DecodeError, skip_tagged_fields

API_VERSIONS_KEY = 18

_FIXED = struct.Struct(">hhih")
_SHARED = struct.Struct(">hhi")
_CORRELATION = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    #: Where the message body starts in the frame.
    body_offset: int


def peek_correlation(frame: bytes) -> tuple[int, int, int]:
    """(api_key, api_version, correlation_id): the part every header version shares."""
    if len(frame) < 8:
        raise DecodeError(f"request of {len(frame)} bytes is too short for a header")
    api_key, api_version, correlation_id = _SHARED.unpack_from(frame, 0)
    return api_key, api_version, correlation_id


def parse_request_header(frame: bytes, flexible: bool) -> RequestHeader:
    """Read the header at the start of `frame`; `flexible` selects header v2."""
    if len(frame) < 10:
        raise DecodeError(f"request of {len(frame)} bytes is too short for a header")
    api_key, api_version, correlation_id, client_id_len = _FIXED.unpack_from(frame, 0)
    offset = 10
    client_id: str | None = None
    if client_id_len >= 0:
        end = offset + client_id_len
        if end > len(frame):
            raise DecodeError("client_id runs past the end of the request")
        try:
            client_id = frame[offset:end].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError("client_id is not UTF-8") from exc
        offset = end
    if flexible:
        offset = skip_tagged_fields(frame, offset)
    return RequestHeader(api_key, api_version, correlation_id, client_id, offset)


def response_header(correlation_id: int, flexible: bool) -> bytes:
    """Response header v1 (flexible: an empty tagged-field section) or v0."""
    header = _CORRELATION.pack(correlation_id)
    return header + b"\0" if flexible else header
