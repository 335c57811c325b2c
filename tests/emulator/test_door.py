"""The emulator's front door: `kafkatest.emulator` and `kafkatest.emulator.protocol`
export what the harness uses (the import contract `emulator-door` lets nothing outside
import past them), each name loaded only when first used, and the `Emulator` object
holds its state, listeners, request hooks (whose handles say whether they fired) and
request log."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
from confluent_kafka.admin import AdminClient

import kafkatest.emulator as door
import kafkatest.emulator.protocol as protocol
from kafkatest.emulator import Emulator, RequestLog


def test_every_name_of_the_door_is_the_object_its_module_defines() -> None:
    assert sorted(door.__all__) == sorted(n for names in door._FACE.values() for n in names)
    for module, defined in door._FACE.items():
        for name in defined:
            value = getattr(door, name)
            origin = importlib.import_module(module)
            assert value is getattr(origin, name, None) or value.__name__ == f"{module}.{name}"
    with pytest.raises(AttributeError, match="no attribute 'runner_thread'"):
        door.runner_thread  # noqa: B018
    assert all(callable(getattr(protocol, name)) for name in protocol.__all__)


def test_importing_the_door_loads_nothing_behind_it() -> None:
    """A module that needs one constant of the emulator does not load the emulator."""
    code = (
        "import sys, kafkatest.emulator\n"
        "loaded = [m for m in ('kafkatest.emulator.runner', 'kafkatest.emulator.server',"
        " 'kafkatest.emulator.protocol') if m in sys.modules]\n"
        "from kafkatest.emulator import SETTINGS\n"
        "loaded += [m for m in ('kafkatest.emulator.runner',) if m in sys.modules]\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_emulator_holds_its_hooks_and_request_log_and_a_hook_says_it_fired() -> None:
    emulator = Emulator()
    emulator.start()
    try:
        hook = emulator.on_request("Metadata", lambda request: None)
        untouched = emulator.on_request("DeleteTopics", lambda request: None)
        emulator.server.request_log = RequestLog(100)
        assert not hook.fired
        admin = AdminClient({"bootstrap.servers": emulator.bootstrap_servers})
        admin.list_topics(timeout=30)
        assert hook.fired and hook.calls >= 1
        assert not untouched.fired
        log = emulator.server.request_log
        assert log is not None and emulator.call(lambda: log.entries("Metadata"))
        hook.remove()
        assert hook._owner is None  # removed: it sees no more requests
        assert emulator.hooks is emulator.server.faults  # installed once, then the same
    finally:
        emulator.close()
