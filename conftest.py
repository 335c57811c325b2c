"""Repository-level pytest configuration.

The kafkatest fixtures come from the installed package's pytest11 entry point, exactly
as in a downstream repo; this file only makes the sample jobs in fixtures/ importable.
"""

import os
import sys
import tempfile
from pathlib import Path

from kafkatest._ground.lean_imports import import_schema_registry_client
from kafkatest.jars.maven import cache_dir

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES / "jobs"))
# The suite's tiers and markers (tests/tiers.py): a plugin of this repository only.
sys.path.insert(0, str(Path(__file__).parent / "tests"))
# The Avro sample job (fixtures/jobs/avro_orders.py) needs spark-avro in the session.
os.environ.setdefault("KAFKATEST_SPARK_EXTRAS", "avro")
# pytester's child runs move HOME to a temp folder, where kafkatest's cache (the
# resolved jars, Spark's class-data-sharing archive) is empty: each child run of a
# downstream suite resolved its jars through Maven again and started Spark without the
# archive, a minute or more per run on CI. Every run of the suite shares the user's
# cache; a test about the cache itself sets its own KAFKATEST_CACHE_DIR.
os.environ.setdefault("KAFKATEST_CACHE_DIR", str(cache_dir()))
# ... but not a warm Spark server the developer left running (recorded in that cache):
# the suite runs classic Spark unless a test starts a server of its own, with its own
# state file. This path is never created.
os.environ.setdefault(
    "KAFKATEST_SPARK_SERVER_STATE",
    str(Path(tempfile.gettempdir()) / f"kafkatest-suite-{os.getpid()}-no-server.json"),
)

# Test modules import confluent-kafka's Schema Registry client, whose authlib warns on
# import past any filter: loaded once here, the way kafkatest loads it.
import_schema_registry_client()

pytest_plugins = ["pytester", "tiers"]
