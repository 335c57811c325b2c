"""The broker's memory: cluster, topics, partition logs, producers, offsets.

Nothing here knows the wire. Everything is mutated from the server's event loop
thread; callers on other threads go through `EmulatorBroker.call`.
"""

from typing import TYPE_CHECKING, Any

import kafkatest.kio_codec  # noqa: F401 - before any kio type is defined

if TYPE_CHECKING:
    from kafkatest.emulator.state.broker_state import BrokerSettings, EmulatorState

__all__ = ["BrokerSettings", "EmulatorState"]


def __getattr__(name: str) -> Any:
    """Load the state on first use: the harness reads the one table of broker settings
    (`broker_settings`) without running an emulator, and should not pay for one."""
    if name in __all__:
        from kafkatest.emulator.state import broker_state

        return getattr(broker_state, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
