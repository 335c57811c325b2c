"""Spark Connect sessions: the job talks to Spark over gRPC, as Databricks Connect and
`SparkSession.builder.remote(...)` jobs do.

`remote="local"` (or `local[N]`) starts a Spark Connect server in this process's JVM
with the Kafka connector on its class path, from the installed PySpark (whose
`connect` extra brings grpcio, pandas and pyarrow). `remote="sc://host:port"` uses a
server that already runs; the connector's jars are sent to it as session artifacts,
so a server started without them can still read Kafka.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING

from kafkatest.config import environment
from kafkatest.errors import SetupError
from kafkatest.lean_imports import import_spark_connect_client
from kafkatest.spark.checkpoints import checkpoint_conf
from kafkatest.spark.session import TEST_CONF, connector_conf

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: The Python packages PySpark's Connect client imports.
_CONNECT_MODULES = ("grpc", "pandas", "pyarrow", "google.protobuf")


def is_connect_session(session: object) -> bool:
    """Whether `session` (or a DataFrame, or a query) belongs to Spark Connect."""
    return type(session).__module__.startswith("pyspark.sql.connect")


def connect_spark_session(
    remote: str = "local", conf: Mapping[str, str] | None = None, *, send_connector: bool = True
) -> SparkSession:
    """A Spark Connect session with the Kafka connector: a local server or `sc://...`.

    An `sc://` server is sent the connector's jars as session artifacts unless
    `send_connector` is false (a server started with them, like kafkatest's warm one).
    """
    missing = [name for name in _CONNECT_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise SetupError(
            f"Spark Connect needs {', '.join(missing)}: pip install 'kafkatest[connect]' "
            "(PySpark's connect extra)"
        )
    import_spark_connect_client()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    if remote == "local" or remote.startswith("local["):
        master = "local[2]" if remote == "local" else remote
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        settings = {**TEST_CONF, **checkpoint_conf(), **connector_conf(), **(conf or {})}
        builder = builder.remote(master)
    elif remote.startswith("sc://"):
        settings = dict(conf or {})
        builder = builder.remote(remote)
    else:
        raise ValueError(
            f"remote must be 'local', 'local[N]' or an sc://host:port URL, not {remote!r}"
        )
    for key, value in settings.items():
        builder = builder.config(key, value)
    with warnings.catch_warnings():
        # The client also tries to set each option on the running server, and warns
        # for the static ones the local server was just started with.
        warnings.filterwarnings("ignore", message="Failed to set spark", category=UserWarning)
        session = builder.getOrCreate()
    if (
        send_connector
        and remote.startswith("sc://")
        and environment("KAFKATEST_SPARK_JARS") != "none"
    ):
        from kafkatest.jars import spark_connector_jars

        session.addArtifacts(*(str(jar) for jar in spark_connector_jars()))
    return session
