"""Sans-IO Kafka wire codec: frames, headers, API messages and record batches.

Nothing here touches a socket, so the same code serves the server, tests that
build raw frames, and any future transport.
"""

import kafkatest.kio_codec  # noqa: F401 - before any kio type is defined
