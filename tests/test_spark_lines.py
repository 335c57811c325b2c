"""`nox -s spark40` and `nox -s spark35` run every test that drives Spark on the older
PySpark lines: a new Spark test module left out of their list fails here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
#: What starts or drives Spark in a test module: the fixtures, a session, a query.
SPARK_USE = re.compile(
    r"def test_\w+\([^)]*\bspark\b|\bspark_session\b|kafka_spark_session|readStream|"
    r"run_scenario|\.read\.format\(\"kafka\"\)",
    re.S,
)


#: Spark tests that run on the default PySpark line only, and why.
DEFAULT_LINE_ONLY = {
    "tests/test_spark_connect.py": "Spark Connect (--spark-remote) is tested on PySpark 4.2",
    "tests/test_spark_masters.py": "local-cluster (--spark-master) is tested on PySpark 4.2",
    "tests/test_spark_server.py": "warm mode is a Spark Connect server: tested on PySpark 4.2",
    "tests/test_xdist.py": "pytest-xdist workers (a SparkSession each) are tested on PySpark 4.2",
    "tests/schema_registry/test_spark_avro.py": (
        "what from_avro does with poison pills is measured on PySpark 4.2 (README table)"
    ),
}


def _listed() -> tuple[str, ...]:
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "SPARK_LINE_TESTS" for t in node.targets
        ):
            return tuple(ast.literal_eval(node.value))
    raise AssertionError("noxfile.py defines no SPARK_LINE_TESTS")


def test_every_spark_test_module_runs_on_the_older_spark_lines() -> None:
    listed = _listed()
    using_spark = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests").rglob("test_*.py")
        if path != Path(__file__)
        and str(path.relative_to(ROOT)) not in DEFAULT_LINE_ONLY
        and SPARK_USE.search(path.read_text())
    )
    assert using_spark, "the pattern should find the Spark tests"
    missing = [
        module
        for module in using_spark
        if not any(module == entry or module.startswith(entry + "/") for entry in listed)
    ]
    assert missing == [], f"add these to SPARK_LINE_TESTS in noxfile.py: {missing}"
