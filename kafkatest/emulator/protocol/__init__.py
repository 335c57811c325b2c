"""Sans-IO Kafka wire codec: frames, headers, API messages and record batches.

Nothing here touches a socket, so the same code serves the server, tests that
build raw frames, and any future transport. This module is the codec's face for
code outside the emulator (the fuzzer, the harness's token and cluster clients);
each name is imported from its module when first used, so importing the face (and any
module inside, which runs it first) loads nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import kafkatest.kio_codec  # noqa: F401 - before any kio type is defined
from kafkatest.lean_imports import imported_on_use

#: Where each name of the face is defined.
_FACE: dict[str, tuple[str, ...]] = {
    "kafkatest.emulator.protocol.framing": ("frame",),
    "kafkatest.emulator.protocol.primitives": ("encode_uvarint",),
    "kafkatest.emulator.protocol.messages": ("response_schema", "is_flexible_request"),
    "kafkatest.emulator.protocol.batches": ("split_batches",),
    "kafkatest.emulator.protocol.record_rewrite": ("single_record_batch",),
}
__all__ = sorted(name for names in _FACE.values() for name in names)
__getattr__ = imported_on_use(__name__, _FACE)

if TYPE_CHECKING:  # the names as mypy sees them (re-exported)
    from kafkatest.emulator.protocol.batches import split_batches as split_batches
    from kafkatest.emulator.protocol.framing import frame as frame
    from kafkatest.emulator.protocol.messages import is_flexible_request as is_flexible_request
    from kafkatest.emulator.protocol.messages import response_schema as response_schema
    from kafkatest.emulator.protocol.primitives import encode_uvarint as encode_uvarint
    from kafkatest.emulator.protocol.record_rewrite import (
        single_record_batch as single_record_batch,
    )
