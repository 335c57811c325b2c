"""The import contracts in pyproject.toml hold, and they bite.

CI runs `lint-imports` (.ci/run); these tests run the same contracts through
import-linter's API on the package's real import graph, first as it stands (every
contract kept), then with one deliberate import added that ARCHITECTURE.md
forbids (the emulator reaching into the harness): the contract that guards it
must break and name the import. A contract that never fails would prove nothing.
"""

from __future__ import annotations

from copy import deepcopy
from functools import cache
from pathlib import Path
from typing import Any

import pytest

# import-linter is a dev tool (the `dev` extra; .ci/run installs it before the tests).
grimp = pytest.importorskip("grimp")
pytest.importorskip("importlinter")

from importlinter.api import read_configuration  # noqa: E402
from importlinter.contracts.forbidden import ForbiddenContract  # noqa: E402
from importlinter.contracts.layers import LayersContract  # noqa: E402
from importlinter.contracts.protected import ProtectedContract  # noqa: E402
from importlinter.domain.contract import Contract  # noqa: E402

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
_TYPES: dict[str, type[Contract]] = {
    "forbidden": ForbiddenContract,
    "layers": LayersContract,
    "protected": ProtectedContract,
}


@cache
def _configuration() -> dict[str, Any]:
    return read_configuration(str(PYPROJECT))


def _graph() -> Any:
    return grimp.build_graph("kafkatest", cache_dir=None)


def _contract(contract_id: str) -> Contract:
    config = _configuration()
    options = next(o for o in config["contracts_options"] if o.get("id") == contract_id)
    return _TYPES[options["type"]](options["name"], config["session_options"], options)


def _contract_ids() -> list[str]:
    return [o["id"] for o in _configuration()["contracts_options"]]


@pytest.fixture(scope="module")
def graph() -> Any:
    return _graph()


def _check(graph: Any, contract_id: str) -> Any:
    """Contract `contract_id` checked on a copy of the graph (a contract's `ignore_imports`
    takes imports out of the graph it checks, as lint-imports's copy per contract)."""
    return _contract(contract_id).check(deepcopy(graph), verbose=False)


def test_every_contract_is_kept_by_the_package_as_it_stands(graph: Any) -> None:
    broken = [i for i in _contract_ids() if not _check(graph, i).kept]
    assert broken == [], f"import contracts broken: {broken}; run lint-imports to see why"


def _check_with(graph: Any, contract_id: str, importer: str, imported: str) -> Any:
    """Contract `contract_id` checked on the graph with one more import in it."""
    graph.add_import(
        importer=importer, imported=imported, line_number=1, line_contents=f"import {imported}"
    )
    try:
        return _check(graph, contract_id)
    finally:
        graph.remove_import(importer=importer, imported=imported)


@pytest.mark.parametrize(
    "forbidden",
    [
        "kafkatest.faults.api",
        "kafkatest.brokers.base",
        "kafkatest.plugin.options",
        "kafkatest.cli",
        # The allow-list holds for modules a deny-list forgot (and for new ones).
        "kafkatest.config",
        "kafkatest.clocks",
        "kafkatest._ground.bounded_json",
    ],
)
def test_an_emulator_module_importing_the_harness_breaks_the_seal(
    graph: Any, forbidden: str
) -> None:
    check = _check_with(graph, "emulator-sealed", "kafkatest.emulator.state.clock", forbidden)
    assert not check.kept
    assert forbidden in repr(check.metadata)


def test_an_import_up_the_layers_breaks_the_layers_contracts(graph: Any) -> None:
    # The emulator's state importing its own server: a lower layer reaching up.
    inner = _check_with(
        graph, "emulator-layers", "kafkatest.emulator.state.clock", "kafkatest.emulator.server"
    )
    assert not inner.kept
    # The records helpers (the package's bottom layer) importing the faults API.
    package = _check_with(graph, "layers", "kafkatest.records", "kafkatest.faults.api")
    assert not package.kept
    # Both were kept before the import and are kept again after it is removed.
    assert _check(graph, "layers").kept


@pytest.mark.parametrize(
    "allowed", ["kafkatest.errors", "kafkatest.limits", "kafkatest._ground.held"]
)
def test_the_emulator_may_import_what_its_allow_list_names(graph: Any, allowed: str) -> None:
    assert _check_with(graph, "emulator-sealed", "kafkatest.emulator.state.clock", allowed).kept


@pytest.mark.parametrize(
    "internal",
    [
        "kafkatest.emulator.runner",
        "kafkatest.emulator.state.time_passes",
        "kafkatest.emulator.server.handlers",
        "kafkatest.emulator.protocol.framing",  # the codec's face, not its modules
    ],
)
def test_outside_the_emulator_importing_past_its_door_breaks_the_door(
    graph: Any, internal: str
) -> None:
    check = _check_with(graph, "emulator-door", "kafkatest.faults.emulator_faults", internal)
    assert not check.kept
    assert internal in repr(check.metadata)


@pytest.mark.parametrize("face", ["kafkatest.emulator", "kafkatest.emulator.protocol"])
def test_outside_the_emulator_code_may_import_its_two_faces(graph: Any, face: str) -> None:
    assert _check_with(graph, "emulator-door", "kafkatest.seeding.replay", face).kept
