"""The broker's memory: cluster, topics, partition logs, producers, offsets.

Nothing here knows the wire. Everything is mutated from the server's event loop
thread; callers on other threads go through `EmulatorBroker.call`.
"""

import kafkatest.kio_codec  # noqa: F401 - before any kio type is defined
from kafkatest.emulator.state.broker_state import BrokerSettings, EmulatorState

__all__ = ["BrokerSettings", "EmulatorState"]
