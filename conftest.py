"""Repository-level pytest configuration.

The kafkatest fixtures come from the installed package's pytest11 entry point, exactly
as in a downstream repo; this file only makes the sample jobs in fixtures/ importable.
"""

import os
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES / "jobs"))
# The suite's tiers and markers (tests/tiers.py): a plugin of this repository only.
sys.path.insert(0, str(Path(__file__).parent / "tests"))
# The Avro sample job (fixtures/jobs/avro_orders.py) needs spark-avro in the session.
os.environ.setdefault("KAFKATEST_SPARK_EXTRAS", "avro")

pytest_plugins = ["pytester", "tiers"]
