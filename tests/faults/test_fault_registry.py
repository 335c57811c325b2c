"""One registry of faults: every surface is made from it, and old names still work."""

from __future__ import annotations

import pytest

from kafkatest.faults import Faults
from kafkatest.faults.cli import _OPTIONS
from kafkatest.faults.control_actions import ACTIONS
from kafkatest.faults.registry import ALIASES, all_faults, canonical
from kafkatest.scenarios.actions import ACTION_PARAMS


def test_every_declared_fault_is_a_method_an_action_and_a_scenario_step() -> None:
    faults = all_faults()
    for name, spec in faults.items():
        assert callable(getattr(Faults, name, None)), name
        assert name in ACTIONS, name
        assert (name in ACTION_PARAMS) == spec.scenario, name
        for param in spec.params:
            if param.types != (dict,):
                assert "--" + param.name.replace("_", "-") in _OPTIONS, (name, param.name)


@pytest.mark.parametrize("old", sorted(ALIASES))
def test_an_old_scenario_name_still_works_with_a_deprecation_warning(old: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"now called {ALIASES[old]!r}"):
        assert canonical(old) == ALIASES[old]
    assert ALIASES[old] in ACTION_PARAMS
