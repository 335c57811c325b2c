"""`nox -s spark35`, `spark40` and `spark43` run every test marked `spark` (tests/tiers.py
derives the marker from the fixtures) except the noxfile's `DEFAULT_LINE_ONLY` modules
and `DEFAULT_LINE_ONLY_TESTS` tests: an entry there must name a module (a test) that
exists, so that a rename cannot widen what the other lines skip."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


def _default_line_only() -> dict[str, str]:
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "DEFAULT_LINE_ONLY" for t in targets):
                assert node.value is not None
                return dict(ast.literal_eval(node.value))
    raise AssertionError("noxfile.py defines no DEFAULT_LINE_ONLY")


def test_the_modules_left_to_the_default_line_exist_and_say_why() -> None:
    skipped = _default_line_only()
    assert skipped
    for module, why in skipped.items():
        assert (ROOT / module).is_file(), f"{module} (DEFAULT_LINE_ONLY) does not exist"
        assert "spark" in (ROOT / module).read_text().lower(), f"{module} does not use Spark"
        assert why.strip(), f"{module}: say why it runs on the default line only"


def test_the_single_tests_left_to_the_default_line_exist_and_say_why() -> None:
    skipped = _noxfile_value("DEFAULT_LINE_ONLY_TESTS")
    assert isinstance(skipped, dict) and skipped
    for node, why in skipped.items():
        module, _, name = node.partition("::")
        source = (ROOT / module).read_text()
        assert f"def {name}(" in source, f"{node} (DEFAULT_LINE_ONLY_TESTS) does not exist"
        assert module not in _default_line_only(), f"{module} is skipped whole already"
        assert str(why).strip(), f"{node}: say why it runs on the default line only"


def test_a_line_that_runs_a_part_names_modules_that_exist() -> None:
    import sys

    pytest.importorskip("nox")
    sys.path.insert(0, str(ROOT))
    try:
        import noxfile
    finally:
        sys.path.remove(str(ROOT))
    for line, modules in noxfile.LINE_PART.items():
        assert line in noxfile.SPARK_LINES, line
        for module in modules:  # a module, or one of its tests
            path, _, test = module.partition("::")
            assert (ROOT / path).is_file(), f"{module} (LINE_PART[{line!r}]) does not exist"
            assert not test or f"def {test}(" in (ROOT / path).read_text(), module


def _noxfile_value(name: str) -> object:
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                assert node.value is not None
                return ast.literal_eval(node.value)
    raise AssertionError(f"noxfile.py defines no {name}")


def test_ci_and_the_docs_name_every_supported_line_and_how_it_is_run() -> None:
    """Each line of kafkatest's range is installed as a project installs it (no
    constraints file) and runs the Spark tests in CI's queue (`nox -s spark35`, ...; the
    default line is CI's own environment, where constraints.txt pins PySpark alone), and
    the versions page names how."""
    from kafkatest.jars.coordinates import NEWEST_LINE, OLDEST_LINE

    lines = _noxfile_value("DOWNSTREAM_LINES")
    assert isinstance(lines, tuple)
    assert lines[0] == "{}.{}".format(*OLDEST_LINE) and lines[-1] == "{}.{}".format(*NEWEST_LINE)
    others = _noxfile_value("SPARK_LINES")
    assert isinstance(others, dict) and set(others) == set(lines) - {"4.2"}
    ci = (ROOT / ".ci" / "run").read_text()
    queue = ci[ci.index("queue=(") : ci.index(")", ci.index("queue=("))].split()
    page = (ROOT / "docs" / "how-to" / "versions.md").read_text()
    constraints = (ROOT / "constraints.txt").read_text()
    pins = [row for row in constraints.splitlines() if row and not row.startswith("#")]
    assert pins == ["pyspark==4.2.1"], pins
    for line in others:
        session = f"spark{line.replace('.', '')}"
        assert session in queue, f"CI does not run the Spark tests on PySpark {line}"
        assert f"`nox -s {session}`" in page
    assert not list(ROOT.glob("constraints-*.txt")), "the other lines install without one"
    assert "spark35 spark40 spark43 --install-only" in ci
