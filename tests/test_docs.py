"""Every code example a user reads is code the tests run, not a copy that can drift.

The README and every page under docs/ are checked the same way: a ```python block is
either the whole of a tested file (a test module under tests/ or a job under
fixtures/), or a snippet this module executes, or marked just above it with
``<!-- not-run: reason -->`` for a reason a reader would accept; such marks stay rare.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"(?:<!-- not-run: (?P<reason>[^>]+?) -->\n)?```python\n(?P<code>.*?)```", re.S)
#: At most this many blocks may be shown without being run.
MOST_NOT_RUN = 3


#: A block that includes a file, or a section of one (pymdownx.snippets, as mkdocs
#: renders it): `--8<-- "tests/x.py"`, `--8<-- "tests/x.py:name"`.
INCLUDE = re.compile(r'--8<-- "(?P<path>[^":]+)(?::(?P<section>[\w-]+))?"\n')
#: What a section of an included file is shown as: run by the test module it is in.
SECTION = "# a section of {path}, run by its tests\n"


def included(code: str) -> str:
    """The text a block shows: an included file whole, a section of a test module
    marked as such (it must exist), or the block itself."""
    match = INCLUDE.fullmatch(code)
    if match is None:
        return code
    text = (ROOT / match["path"]).read_text()
    if match["section"] is None:
        return text
    start, end = f"# --8<-- [start:{match['section']}]", f"# --8<-- [end:{match['section']}]"
    assert start in text and end in text, f"{match['path']} has no section {match['section']}"
    assert match["path"].startswith("tests/"), f"{match['path']}: include sections of tests only"
    return SECTION.format(path=match["path"])


def blocks(page: Path) -> list[tuple[str, str | None]]:
    """(code, reason it is not run) of each python block of a page."""
    found = BLOCK.finditer(page.read_text())
    return [(included(match["code"]), match["reason"]) for match in found]


def files_shown_whole() -> dict[str, Path]:
    """The text of each test module and sample job, which a block may show whole."""
    paths = [*ROOT.glob("tests/**/*.py"), *ROOT.glob("fixtures/**/*.py")]
    return {path.read_text(): path for path in paths}


def every_block() -> list[tuple[Path, str, str | None]]:
    return [(page, code, reason) for page in PAGES for code, reason in blocks(page)]


def _id(entry: tuple[Path, str, str | None]) -> str:
    page, code, _ = entry
    return f"{page.relative_to(ROOT)}:{code.splitlines()[0][:40]}"


SNIPPETS = [
    entry
    for entry in every_block()
    if entry[2] is None
    and entry[1] not in files_shown_whole()
    and "def test_" not in entry[1]
    and not entry[1].startswith("# a section of tests/")
]


@pytest.mark.parametrize(
    "name",
    [
        "test_readme_example.py",
        "test_readme_sinks_example.py",
        "test_readme_scenario_example.py",
        "test_readme_schemas_example.py",
    ],
)
def test_the_tested_examples_are_shown(name: str) -> None:
    example = (ROOT / "tests" / name).read_text()
    assert any(example == code for _, code, _ in every_block()), f"{name} is in no page"


def test_a_block_defining_tests_is_a_tested_file() -> None:
    files = files_shown_whole()
    untested = [
        _id(entry)
        for entry in every_block()
        if "def test_" in entry[1] and entry[1] not in files and entry[2] is None
    ]
    assert not untested, f"test code that no test module holds: {untested}"


def test_few_blocks_are_left_unrun() -> None:
    unrun = [_id(entry) for entry in every_block() if entry[2] is not None]
    assert len(unrun) <= MOST_NOT_RUN, unrun


@pytest.mark.parametrize("entry", SNIPPETS, ids=_id)
def test_snippets_run(entry: tuple[Path, str, str | None]) -> None:
    page, code, _ = entry
    exec(compile(code, str(page.relative_to(ROOT)), "exec"), {"__name__": "docs_snippet"})


def test_ci_runs_the_readme_test_command() -> None:
    quick_start = (ROOT / "README.md").read_text().split("## Quick start", 1)[1]
    shell = re.findall(r"```bash\n(.*?)```", quick_start, flags=re.S)
    assert len(shell) >= 2, "Quick start needs the demo block, then the test block"
    assert "kafkatest demo" in shell[0]
    test_command = shell[1].strip()
    ci = (ROOT / ".ci" / "run").read_text()
    # CI runs the command's two halves as written: the install first, alone (pip
    # rewrites the editable install), then the tests, beside other jobs.
    install, tests = test_command.split(" && ")
    assert install in ci and f"\t{tests}\n" in ci
    assert ci.index(install) < ci.index(f"\t{tests}\n")


def test_the_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250
