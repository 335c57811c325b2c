"""Backends answer what they can do: each `Broker` class declares its capabilities
once, and the fault registry's "which backends" is derived from them."""

from __future__ import annotations

import pathlib
import re

from kafkatest.brokers.capabilities import Capability
from kafkatest.brokers.registry import BACKENDS, backend_class, backends_with
from kafkatest.faults.registry import all_faults


def test_the_fault_backends_are_those_before_capabilities_were_declared() -> None:
    """The sets the fault declarations listed by name, now derived."""
    faults = all_faults()
    assert faults["stop"].backends == {"emulator", "kafka", "container"}
    assert faults["restart"].backends == {"emulator", "kafka", "container"}
    assert faults["pause"].backends == {"emulator", "kafka"}
    assert faults["move_leader"].backends == {"emulator", "kafka"}
    assert faults["compact_now"].backends == {"emulator", "kafka"}
    assert faults["slow_fetch"].backends == {"emulator"}
    assert faults["advance_clock"].backends == {"emulator"}
    assert faults["delete_topic"].backends == set(BACKENDS)


def test_a_backend_is_its_class_and_the_class_says_what_it_can_do() -> None:
    for name in BACKENDS:
        cls = backend_class(name)
        assert cls.backend == name
        assert all(isinstance(c, Capability) for c in cls.capabilities)
    assert backends_with() == set(BACKENDS)
    assert backends_with(Capability.REQUEST_HOOKS, Capability.CLOCK) == {"emulator"}
    assert backend_class("external").capabilities == frozenset()


def test_no_code_compares_a_backend_name() -> None:
    """A new comparison of the name would bypass the declarations."""
    package = pathlib.Path(__file__).parent.parent / "kafkatest"
    pattern = re.compile(
        r"""backend\s*(==|!=)|(==|!=)\s*["'](emulator|kafka|container|external)["']"""
    )
    found = [
        f"{path.relative_to(package)}:{number}"
        for path in package.rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []
