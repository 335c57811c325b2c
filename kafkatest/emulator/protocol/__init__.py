"""Sans-IO Kafka wire codec: frames, headers, API messages and record batches.

Nothing here touches a socket, so the same code serves the server, tests that
build raw frames, and any future transport. This module is the codec's face for
code outside the emulator (the fuzzer, the harness's token and cluster clients).
"""

import kafkatest.kio_codec  # noqa: F401 - before any kio type is defined
from kafkatest.emulator.protocol.batches import split_batches
from kafkatest.emulator.protocol.framing import frame
from kafkatest.emulator.protocol.messages import is_flexible_request, response_schema
from kafkatest.emulator.protocol.primitives import encode_uvarint
from kafkatest.emulator.protocol.record_rewrite import single_record_batch

__all__ = [
    "encode_uvarint",
    "frame",
    "is_flexible_request",
    "response_schema",
    "single_record_batch",
    "split_batches",
]
