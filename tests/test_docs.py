"""The README's examples are the tested code, not a copy that can drift."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def fenced_blocks(language: str) -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize(
    "name",
    [
        "test_readme_example.py",
        "test_readme_sinks_example.py",
        "test_readme_scenario_example.py",
        "test_readme_schemas_example.py",
    ],
)
def test_readme_examples_are_the_tested_files(name: str) -> None:
    example = (ROOT / "tests" / name).read_text()
    assert example in fenced_blocks("python")


@pytest.mark.parametrize(
    "block",
    [b for b in fenced_blocks("python") if "def test_" not in b],
    ids=lambda b: b.splitlines()[0][:40],
)
def test_readme_snippets_run(block: str) -> None:
    exec(compile(block, "README.md", "exec"), {"__name__": "readme"})


def test_ci_runs_the_readme_test_command() -> None:
    quick_start = (ROOT / "README.md").read_text().split("## Quick start", 1)[1]
    shell = re.findall(r"```bash\n(.*?)```", quick_start, flags=re.S)
    assert len(shell) >= 2, "Quick start needs the demo block, then the test block"
    assert "kafkatest demo" in shell[0]
    test_command = shell[1].strip()
    assert test_command in (ROOT / ".ci" / "run").read_text()
