"""asyncio TCP front of the emulator: listeners, connections, dispatch to handlers."""

import kafkatest.kio_codec  # noqa: F401 - before any kio type is defined
from kafkatest.emulator.server.server import EmulatorServer

__all__ = ["EmulatorServer"]
