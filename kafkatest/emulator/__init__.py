"""An in-memory, wire-compatible Kafka broker for tests: a library of its own.

Its layers, each a package, from the bottom: `protocol` turns bytes into requests
and responses (no sockets, no state), `state` is the broker's memory (no wire),
`server` joins them over asyncio TCP listeners, one per emulated broker id, and
`control` intercepts requests on their way to a handler (fault rules, the pause
gate: kfake's ControlKey). `runner` makes the `Emulator`, which starts it all on a
thread. The emulator imports nothing of kafkatest but the codec (`kafkatest.kio_codec`),
`errors`, `limits` and the ground helpers; the harness, the standalone server and the
fuzzer sit above it and import only this module and `kafkatest.emulator.protocol`
(ARCHITECTURE.md, enforced by the import contracts in pyproject.toml).

This module is the door; each name is imported from its module when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# Before any subpackage defines a kio type (control/errors.py does, and a broker may
# import it first): kio's hypothesis hooks stay off (tests/emulator/test_kio_codec.py).
import kafkatest.kio_codec  # noqa: F401
from kafkatest._ground.lean_imports import imported_on_use

#: Where each name of the door is defined.
_FACE: dict[str, tuple[str, ...]] = {
    # the emulator, its state and its settings
    "kafkatest.emulator.runner": ("Emulator", "OWN_THREAD"),
    "kafkatest.emulator.state.broker_state": ("EmulatorState",),
    "kafkatest.emulator.state.broker_settings": ("BrokerSettings", "SETTINGS", "KAFKA_BACKEND"),
    "kafkatest.emulator.state.broker_config_rules": ("check_requirements", "check_value"),
    "kafkatest.emulator.state.cleaner": ("COMPACT_NOW_KEY",),
    "kafkatest.emulator.state.acls": ("Authorizer",),
    # request hooks and fault rules (and the checks a rule passes), the request log
    "kafkatest.emulator.control": ("checks",),
    "kafkatest.emulator.control.request_hooks": ("RequestHook", "DELAY", "DROP", "HOLD"),
    "kafkatest.emulator.control.rules": ("Rule",),
    "kafkatest.emulator.server.faults": ("FaultHook",),
    "kafkatest.emulator.server.handlers": ("load_handlers",),
    "kafkatest.emulator.server.request_log": (
        "RequestLog",
        "RequestEntry",
        "summary_lines",
        "timeline",
    ),
    "kafkatest.emulator.server.timings": ("RequestTimings",),
    # listeners: the security spec, kafkatest's own listener
    "kafkatest.emulator.server.security": ("ListenerSecurity",),
    "kafkatest.emulator.server.server": ("HarnessListener",),
    # errors and warnings
    "kafkatest.emulator.control.errors": ("InvalidFault",),
    "kafkatest.emulator.state.errors": ("StateError",),
    "kafkatest._ground.exposure": ("ExposedEmulatorWarning",),
}
__all__ = sorted(name for names in _FACE.values() for name in names)
__getattr__ = imported_on_use(__name__, _FACE)

if TYPE_CHECKING:  # the names as mypy sees them (re-exported)
    from kafkatest._ground.exposure import ExposedEmulatorWarning as ExposedEmulatorWarning
    from kafkatest.emulator.control import checks as checks
    from kafkatest.emulator.control.errors import InvalidFault as InvalidFault
    from kafkatest.emulator.control.request_hooks import (
        DELAY as DELAY,
        DROP as DROP,
        HOLD as HOLD,
        RequestHook as RequestHook,
    )
    from kafkatest.emulator.control.rules import Rule as Rule
    from kafkatest.emulator.runner import OWN_THREAD as OWN_THREAD, Emulator as Emulator
    from kafkatest.emulator.server.faults import FaultHook as FaultHook
    from kafkatest.emulator.server.handlers import load_handlers as load_handlers
    from kafkatest.emulator.server.request_log import (
        RequestEntry as RequestEntry,
        RequestLog as RequestLog,
        summary_lines as summary_lines,
        timeline as timeline,
    )
    from kafkatest.emulator.server.security import ListenerSecurity as ListenerSecurity
    from kafkatest.emulator.server.server import HarnessListener as HarnessListener
    from kafkatest.emulator.server.timings import RequestTimings as RequestTimings
    from kafkatest.emulator.state.acls import Authorizer as Authorizer
    from kafkatest.emulator.state.broker_config_rules import (
        check_requirements as check_requirements,
        check_value as check_value,
    )
    from kafkatest.emulator.state.broker_settings import (
        KAFKA_BACKEND as KAFKA_BACKEND,
        SETTINGS as SETTINGS,
        BrokerSettings as BrokerSettings,
    )
    from kafkatest.emulator.state.broker_state import EmulatorState as EmulatorState
    from kafkatest.emulator.state.cleaner import COMPACT_NOW_KEY as COMPACT_NOW_KEY
    from kafkatest.emulator.state.errors import StateError as StateError
