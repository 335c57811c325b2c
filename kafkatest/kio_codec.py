"""kio, the Kafka protocol codec the emulator and the faults use, imported without
its hypothesis hooks.

When hypothesis is importable, kio registers a hypothesis strategy for each of its
constrained types (int32, topic names, ...) as it defines them, and hypothesis
checks each new strategy by building its table of Unicode characters, cached in
``.hypothesis/`` of the current directory. In a directory without that cache (every
fresh CI checkout, every new project) importing the emulator then took 1.7 s more
and left a ``.hypothesis/`` folder behind, in a project that may not use hypothesis
at all. kafkatest's packages that use kio import this module first, so kio defines
its types with the hooks off; `register_hypothesis_strategies` turns them back on
for property tests that draw protocol messages with ``st.from_type``.

kio also imports hypothesis as it loads (0.2 s, a fifth of importing the emulator, paid
by every test run that starts one). When nothing has imported hypothesis yet, kio is
loaded with hypothesis hidden from the loading thread only (`kafkatest._ground.lean_imports`),
so other threads import it as usual and a later property test still can.
"""

from __future__ import annotations

import sys
import threading

from kafkatest._ground.lean_imports import hidden_from_this_thread

with hidden_from_this_thread("hypothesis"):
    import kio.static._phantom as _phantom

if "kio.static.primitive" not in sys.modules:  # kio's types are not defined yet
    _phantom.hypothesis = None

_registered = threading.Lock()
_done = False


def register_hypothesis_strategies() -> None:
    """Register the hypothesis strategies of kio's types, as kio does on its own
    when it is imported before kafkatest (idempotent)."""
    global _done
    import hypothesis.strategies  # noqa: F401 - binds the package `hypothesis`

    with _registered:
        if _done:
            return
        _phantom.hypothesis = sys.modules["hypothesis"]
        pending = list(_phantom.Phantom.__subclasses__())
        while pending:
            cls = pending.pop()
            cls.__hypothesis_hook__()
            pending.extend(cls.__subclasses__())
        _done = True
