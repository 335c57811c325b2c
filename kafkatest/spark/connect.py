"""Spark Connect sessions: the job talks to Spark over gRPC, as Databricks Connect and
`SparkSession.builder.remote(...)` jobs do.

`remote="local"` (or `local[N]`) starts a Spark Connect server in this process's JVM
with the Kafka connector on its class path, from the installed PySpark (whose
`connect` extra brings grpcio, pandas and pyarrow). kafkatest starts that server
itself rather than through `builder.remote("local")`, which binds every interface on
the fixed port 15002: two runs at once (CI's two halves, xdist workers) would collide,
and a test's Spark would be open to the network. Here it listens on loopback, on a
port the OS picks. `remote="sc://host:port"` uses a
server that already runs; the connector's jars are sent to it as session artifacts,
so a server started without them can still read Kafka.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, cast

from kafkatest._ground.lean_imports import import_spark_connect_client
from kafkatest.config import environment

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


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
    from kafkatest.spark.server import connect_client_refusal

    refusal = connect_client_refusal("a Spark Connect session")
    if refusal is not None:
        raise refusal
    import_spark_connect_client()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    if remote == "local" or remote.startswith("local["):
        master = "local[2]" if remote == "local" else remote
        settings = {}
        url = _start_local_server(master, conf)
        # PySpark's own builder refuses a remote session beside the classic one that
        # serves it; its Connect builder is what its local mode uses for that step.
        from pyspark.sql.connect.session import SparkSession as ConnectSession

        os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"  # PySpark's functions go remote
        builder = ConnectSession.builder.remote(url)  # type: ignore[assignment]
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


def _start_local_server(master: str, conf: Mapping[str, str] | None) -> str:
    """Start Spark with the Connect plugin on a free loopback port; its ``sc://`` URL.

    On Spark 4.0+ the server takes a pre-shared key, as PySpark's own local mode does,
    so that no other local user can use it while the run lasts."""
    import secrets

    import pyspark

    from kafkatest.brokers.process import free_port
    from kafkatest.spark.server import AUTH_TOKEN_VARIABLE, checks_tokens, connect_server_conf
    from kafkatest.spark.session import hold_connect_server, kafka_spark_session, merged_conf

    token = ""
    if checks_tokens(pyspark.__version__):
        # The server's JVM, started below, inherits it; PySpark's local mode does the same.
        token = os.environ.setdefault(AUTH_TOKEN_VARIABLE, secrets.token_urlsafe(32))
    port = free_port()
    server = kafka_spark_session(
        master=master, conf=merged_conf(conf or {}, connect_server_conf(port))
    )
    hold_connect_server(server)
    return f"sc://localhost:{port}/;token={token}" if token else f"sc://127.0.0.1:{port}"


@contextlib.contextmanager
def api_of(session: object) -> Iterator[None]:
    """While inside, PySpark's functions (``F.col``, ``F.window``...) build columns for
    `session`'s kind: Connect columns for a Connect session, classic ones for a classic
    session.

    PySpark decides by one process-wide variable, ``SPARK_CONNECT_MODE_ENABLED``, that
    making a Connect session sets: a classic session used beside one (a test marked
    ``local_spark`` in a run on the warm server, the oracles' corpus on both kinds)
    would otherwise be handed Connect columns and fail.
    """
    wanted = is_connect_session(session)
    had = os.environ.get(_CONNECT_MODE)
    if wanted:
        os.environ[_CONNECT_MODE] = had or "1"
    else:
        os.environ.pop(_CONNECT_MODE, None)
    try:
        yield
    finally:
        if had is None:
            os.environ.pop(_CONNECT_MODE, None)
        else:
            os.environ[_CONNECT_MODE] = had


_CONNECT_MODE = "SPARK_CONNECT_MODE_ENABLED"
_CONNECT_ERRORS = "org.apache.spark.sql.connect.utils.ErrorUtils"


def connect_session_beside(classic: SparkSession) -> SparkSession:
    """A Spark Connect session served by `classic`'s own JVM (its Connect service started
    on a free loopback port, with a pre-shared key where the line checks one): the same
    Spark, reached the way a Connect client reaches it, with no second JVM to start.
    `stop_connect_beside` ends it and leaves `classic` running."""
    import secrets

    import pyspark

    from kafkatest.brokers.process import free_port
    from kafkatest.spark.server import checks_tokens
    from kafkatest.spark.session import _served_here

    import_spark_connect_client()
    jvm = classic._jvm
    assert jvm is not None
    port = free_port()
    conf = classic.sparkContext._jsc.sc().conf()  # the running context's own conf
    conf.set("spark.connect.grpc.binding.address", "127.0.0.1")
    conf.set("spark.connect.grpc.binding.port", str(port))
    token = ""
    if checks_tokens(pyspark.__version__):
        token = secrets.token_urlsafe(32)
        conf.set("spark.connect.authenticate.token", token)
    # Its RPC errors reach the client as exceptions; the service's own log of them (and
    # of the client's last calls racing its stop) belongs in the log file.
    from kafkatest.spark.logs import route_to_file

    route_to_file(jvm, (_CONNECT_ERRORS,))
    jvm.org.apache.spark.sql.connect.service.SparkConnectService.start(
        classic.sparkContext._jsc.sc()
    )
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    # "localhost": PySpark's client speaks TLS to any other host once a token is set.
    url = f"sc://localhost:{port}/;token={token}" if token else f"sc://127.0.0.1:{port}"
    had = os.environ.get(_CONNECT_MODE)
    try:
        session = ConnectSession.builder.remote(url).create()
    finally:  # the classic session stays the process's kind; `api_of` switches
        if had is None:
            os.environ.pop(_CONNECT_MODE, None)
    _served_here[id(session)] = jvm
    return cast("SparkSession", session)


def stop_connect_beside(session: SparkSession) -> None:
    """End a session of `connect_session_beside` and its service; the classic session
    that served it goes on."""
    from kafkatest.spark.session import _served_here

    jvm = _served_here.pop(id(session), None)
    with contextlib.suppress(Exception):
        session.stop()
    if jvm is not None:
        with contextlib.suppress(Exception):
            jvm.org.apache.spark.sql.connect.service.SparkConnectService.stop(
                jvm.scala.Option.empty(), jvm.scala.Option.empty()
            )
