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


def test_a_checkpoint_fault_is_in_every_surface_but_the_control_interface(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from kafkatest import cli
    from kafkatest.faults.control_actions import BadRequest, checked_params

    assert callable(Faults.damage_checkpoint)
    assert ACTIONS["damage_checkpoint"] == {"checkpoint": str, "fault": str}
    assert {"--checkpoint", "--fault"} <= set(_OPTIONS)
    # A scenario names the fault; the run supplies its job's checkpoint.
    assert ACTION_PARAMS["damage_checkpoint"] == (("fault",), ())

    with pytest.raises(BadRequest, match="not done through the control interface: a checkpoint"):
        checked_params("damage_checkpoint", {"checkpoint": "/tmp/x", "fault": "delete-offsets"})
    argv = ["fault", "damage_checkpoint", "--checkpoint", "/tmp/x", "--fault", "delete-offsets"]
    assert cli.main(argv) == 2
    assert "damage_checkpoint is not done here: a checkpoint is a path" in capsys.readouterr().err


def test_an_unknown_checkpoint_fault_is_refused_with_the_list(kafka_faults, tmp_path) -> None:
    from kafkatest.checkpoints import CHECKPOINT_FAULTS, CheckpointFaultError

    (tmp_path / "commits").mkdir()
    (tmp_path / "commits" / "0").write_text("v1\n{}")
    with pytest.raises(CheckpointFaultError) as refused:
        kafka_faults.damage_checkpoint(str(tmp_path), "delete-everything")
    message = str(refused.value)
    assert message.startswith("unknown checkpoint fault 'delete-everything': one of ")
    assert all(name in message for name in CHECKPOINT_FAULTS) and "rewind-to-<n>" in message
    assert (tmp_path / "commits" / "0").read_text() == "v1\n{}", "nothing was touched"
