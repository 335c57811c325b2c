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
loaded with hypothesis hidden from the loading thread only, so other threads import
it as usual and a later property test still can.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Sequence
from types import ModuleType


class _HypothesisHiddenFromThisThread(importlib.abc.MetaPathFinder):
    """An import finder that fails `import hypothesis` in the thread that made it."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if threading.get_ident() == self.thread and fullname.split(".")[0] == "hypothesis":
            raise ModuleNotFoundError("kafkatest loads kio without hypothesis", name=fullname)
        return None


if "kio.static._phantom" in sys.modules or "hypothesis" in sys.modules:
    import kio.static._phantom as _phantom
else:
    _hidden = _HypothesisHiddenFromThisThread()
    sys.meta_path.insert(0, _hidden)
    try:
        import kio.static._phantom as _phantom
    finally:
        sys.meta_path.remove(_hidden)

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
