"""docs/how-to/oracles.md shows the tested example and sample job, not copies that can drift."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_show_the_tested_example_and_job() -> None:
    docs = (ROOT / "docs" / "how-to" / "oracles.md").read_text()
    for path in ("tests/oracles/test_docs_example.py", "fixtures/jobs/payments.py"):
        assert f"```python\n{(ROOT / path).read_text()}```" in docs, path


def test_the_docs_show_the_catch_matrix_the_suite_checks() -> None:
    from corpus.matrix import table

    docs = (ROOT / "docs" / "how-to" / "oracles.md").read_text()
    shown = docs.split("<!-- catch-matrix:start -->\n", 1)[1].split(
        "\n<!-- catch-matrix:end -->", 1
    )[0]
    assert shown == table(), (
        "docs/how-to/oracles.md's catch matrix is stale: paste corpus.matrix.table()"
    )
