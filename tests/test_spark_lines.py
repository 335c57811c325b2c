"""`nox -s spark40` and `nox -s spark35` run every test marked `spark` (tests/tiers.py
derives the marker from the fixtures) except the noxfile's `DEFAULT_LINE_ONLY`: an entry
there must name a module that exists and drives Spark, so that a rename cannot widen
what the older lines skip."""

from __future__ import annotations

import ast
from pathlib import Path

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
