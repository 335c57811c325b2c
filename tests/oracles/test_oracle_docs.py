"""docs/oracles.md shows the tested example and sample job, not copies that can drift."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_show_the_tested_example_and_job() -> None:
    docs = (ROOT / "docs" / "oracles.md").read_text()
    for path in ("tests/oracles/test_docs_example.py", "fixtures/jobs/payments.py"):
        assert f"```python\n{(ROOT / path).read_text()}```" in docs, path
