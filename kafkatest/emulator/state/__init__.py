"""The broker's memory: cluster, topics, partition logs, producers, offsets.

Nothing here knows the wire. Everything is mutated from the server's event loop
thread; callers on other threads go through `EmulatorBroker.call`.
"""

from typing import TYPE_CHECKING

import kafkatest.kio_codec  # noqa: F401 - before any kio type is defined
from kafkatest._ground.lean_imports import imported_on_use

if TYPE_CHECKING:
    from kafkatest.emulator.state.broker_state import BrokerSettings, EmulatorState

__all__ = ["BrokerSettings", "EmulatorState"]
# Loaded on first use: the harness reads the one table of broker settings
# (`broker_settings`) without running an emulator, and should not pay for one.
__getattr__ = imported_on_use(__name__, {"kafkatest.emulator.state.broker_state": tuple(__all__)})
