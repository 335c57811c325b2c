"""The reference pages are generated from the code: every option, ini key, marker,
fixture, command and environment variable kafkatest has is on them.

docs/_hooks/reference.py makes the tables when mkdocs builds the site; these tests run
its functions directly, so a new option that would be missing from the docs fails here
in the fast tier rather than in the site build.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import yaml

ROOT = Path(__file__).resolve().parent.parent
#: Read by kafkatest itself between its own processes, never set by a user.
INTERNAL_VARIABLES = {"KAFKATEST_CLIENT_CONFIG", "KAFKATEST_JARS_DIR"}


def hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "docs_reference", ROOT / "docs/_hooks/reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["docs_reference"] = module
    spec.loader.exec_module(module)
    return module


def test_every_plugin_option_and_ini_key_is_listed() -> None:
    reference = hook()
    options, ini = reference.options_table(), reference.ini_table()
    for names, _ in reference.declared().options:
        assert f"`{names[0]}`" in options
    assert "`--kafka-backend`" in options and "`--spark-remote`" in options
    for name, _, _ in reference.declared().ini:
        assert f"`{name}`" in ini
    assert "`spark_extras`" in ini


def test_every_fixture_and_marker_is_listed() -> None:
    reference = hook()
    fixtures = reference.fixtures_table()
    for name in ("kafka_broker", "kafka_topic", "spark", "checkpoint_dir", "kafka_faults"):
        assert f"| `{name}` |" in fixtures
    assert "_kafkatest_backend_filter" not in fixtures
    assert "@pytest.mark.kafka_backends" in reference.markers_table()


def test_every_command_is_listed() -> None:
    from kafkatest.cli import build_parser

    page = hook().cli_reference()
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for name in commands:
        assert f"## `kafkatest {name}`" in page


def test_every_environment_variable_kafkatest_reads_is_listed() -> None:
    source = "\n".join(path.read_text() for path in (ROOT / "kafkatest").rglob("*.py"))
    read = set(re.findall(r"environ(?:\.get)?\(\s*\"(KAFKATEST_[A-Z_]+)\"", source))
    read |= set(re.findall(r"environ\[\"(KAFKATEST_[A-Z_]+)\"\]", source))
    table = hook().environment_table()
    missing = sorted(name for name in read - INTERNAL_VARIABLES if f"`{name}`" not in table)
    assert not missing, f"read by kafkatest, not in the reference: {missing}"


def test_every_public_name_is_documented() -> None:
    import kafkatest

    api = hook().api_reference()
    for name in kafkatest._EXPORTS:
        assert f"::: kafkatest.{name}" in api


def test_every_page_is_in_the_nav() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def pages(entries: list[object]) -> list[str]:
        found: list[str] = []
        for entry in entries:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            found += pages(value) if isinstance(value, list) else [str(value)]
        return found

    listed = set(pages(config["nav"]))
    on_disk = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert listed <= on_disk, sorted(listed - on_disk)
    assert on_disk <= listed, f"pages no reader can reach: {sorted(on_disk - listed)}"


def test_the_committed_reference_pages_are_up_to_date() -> None:
    """The configuration, broker settings and faults pages are generated in full and
    committed, so a reader on a code host sees them; this fails while one is stale."""
    stale = hook().stale_pages()
    assert not stale, f"stale: {stale}; regenerate with `python docs/_hooks/reference.py`"


def test_the_faults_page_lists_every_fault() -> None:
    from kafkatest.faults.registry import all_faults

    page = hook().faults_page()
    for name in all_faults():
        assert f"| `{name}` |" in page
    assert "| `poison` |" in page and "| `slow_fetch` |" in page
