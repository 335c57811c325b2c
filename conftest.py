"""Repository-level pytest configuration.

The kafkatest fixtures come from the installed package's pytest11 entry point, exactly
as in a downstream repo; this file only makes the sample jobs in fixtures/ importable.
"""

import os
import sys
from pathlib import Path

from kafkatest.lean_imports import import_schema_registry_client

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES / "jobs"))
# The suite's tiers and markers (tests/tiers.py): a plugin of this repository only.
sys.path.insert(0, str(Path(__file__).parent / "tests"))
# The Avro sample job (fixtures/jobs/avro_orders.py) needs spark-avro in the session.
os.environ.setdefault("KAFKATEST_SPARK_EXTRAS", "avro")

# Test modules import confluent-kafka's Schema Registry client, whose authlib warns on
# import past any filter: loaded once here, the way kafkatest loads it.
import_schema_registry_client()

pytest_plugins = ["pytester", "tiers"]
