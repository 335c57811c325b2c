"""asyncio TCP front of the emulator: listeners, connections, dispatch to handlers."""

from kafkatest.emulator.server.server import EmulatorServer

__all__ = ["EmulatorServer"]
