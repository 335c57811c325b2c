"""The import contracts in pyproject.toml hold, and they bite.

CI runs `lint-imports` (.ci/run); these tests run the same contracts through
import-linter's API on the package's real import graph, first as it stands (every
contract kept), then with one deliberate import added that ARCHITECTURE.md
forbids (the emulator reaching into the harness): the contract that guards it
must break and name the import. A contract that never fails would prove nothing.
"""

from __future__ import annotations

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
from importlinter.domain.contract import Contract  # noqa: E402

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
_TYPES: dict[str, type[Contract]] = {"forbidden": ForbiddenContract, "layers": LayersContract}


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


def test_every_contract_is_kept_by_the_package_as_it_stands(graph: Any) -> None:
    broken = [i for i in _contract_ids() if not _contract(i).check(graph, verbose=False).kept]
    assert broken == [], f"import contracts broken: {broken}; run lint-imports to see why"


def _check_with(graph: Any, contract_id: str, importer: str, imported: str) -> Any:
    """Contract `contract_id` checked on the graph with one more import in it."""
    graph.add_import(
        importer=importer, imported=imported, line_number=1, line_contents=f"import {imported}"
    )
    try:
        return _contract(contract_id).check(graph, verbose=False)
    finally:
        graph.remove_import(importer=importer, imported=imported)


@pytest.mark.parametrize(
    "forbidden",
    ["kafkatest.faults.api", "kafkatest.brokers.base", "kafkatest.plugin.options", "kafkatest.cli"],
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
    assert _contract("layers").check(graph, verbose=False).kept
