"""The scenario-file and capture-file reference pages are committed (a reader on a code
host sees them) and made from the declarations: a page that no longer matches what
kafkatest declares fails here. Regenerate with ``python docs/_hooks/file_formats.py``."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    path = REPOSITORY / "docs" / "_hooks" / "file_formats.py"
    spec = importlib.util.spec_from_file_location("kafkatest_docs_file_formats", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = _generator()


@pytest.mark.parametrize("page", sorted(GENERATOR.PAGES))
def test_the_committed_page_is_what_the_declarations_make(page: str) -> None:
    committed = (REPOSITORY / page).read_text(encoding="utf-8")
    assert committed == GENERATOR.PAGES[page]() + "\n", (
        f"{page} is stale: run `python docs/_hooks/file_formats.py` and commit it"
    )


def test_every_action_and_capture_field_is_on_its_page() -> None:
    from kafkatest.scenarios.actions import ACTIONS
    from kafkatest.seeding.capture_file import RECORD_LINE, VALUE_FORMS

    scenarios = GENERATOR.scenario_files()
    captures = GENERATOR.capture_files()
    assert all(f"| `{name}` |" in scenarios for name in ACTIONS)
    assert all(f"| `{name}` |" in captures for name in (*RECORD_LINE, *VALUE_FORMS))
