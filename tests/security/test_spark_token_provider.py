"""Spark's own delegation token path (issue 34, item 4): Spark obtains the token itself.

The job's options carry only ``kafka.bootstrap.servers``. The token comes from the
session's ``spark.kafka.clusters.<name>.*`` settings: the driver logs in to a KDC from
a keytab (Spark makes a token manager only with Hadoop security on), asks the broker
for a token over SCRAM as alice, and the source and sink log in with it. The driver
runs in a process of its own: Hadoop security is process-wide in a JVM, so it cannot
be switched on in the suite's shared session.

Both backends: Kafka never sees Kerberos (the admin client that asks for the token logs
in over SCRAM), so the emulator needs no GSSAPI.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import kafkatest
from kafkatest import Broker
from kafkatest.assertions import assert_exactly_once
from kafkatest.brokers.kdc import Kdc
from kafkatest.seeding import seed
from kafkatest.sinks import topic_rows
from kafkatest.spark.token_provider import local_mode_obtains_tokens, token_provider_conf

#: The job, in a Python process of its own: a session with the token settings, a
#: stream from `source` to `sink` with no security options, and what the driver holds.
JOB = """
import json, sys
from kafkatest.scenarios.jobs import copy_stream
from kafkatest.spark import wait_for_query
from kafkatest.spark.session import kafka_spark_session, stop_spark_session

args = json.loads(sys.argv[1])
spark = kafka_spark_session("spark-token-provider", "local[2]", conf=args["conf"])
try:
    ugi = spark._jvm.org.apache.hadoop.security.UserGroupInformation
    tokens = ugi.getCurrentUser().getCredentials().getAllTokens().toArray()
    held = sorted(str(t.getService().toString()) for t in tokens)
    query = copy_stream(spark, args["bootstrap"], args["source"], args["sink"], args["checkpoint"])
    wait_for_query(query, timeout_s=240)
    print("RESULT " + json.dumps({"security": bool(ugi.isSecurityEnabled()), "tokens": held}))
finally:
    stop_spark_session(spark)
"""


@pytest.fixture(scope="module")
def kdc() -> Iterator[Kdc]:
    with Kdc(["alice"]) as started:
        yield started


def test_the_kdc_serves_on_loopback_and_is_gone_after_close() -> None:
    kdc = Kdc(["alice", "kafka/localhost"]).start()
    try:
        assert kdc.running and kdc.port is not None
        assert kdc.principal("alice") == "alice@EXAMPLE.COM"
        assert kdc.keytab.stat().st_size > 0
        conf = kdc.krb5_conf.read_text()
        assert "default_realm = EXAMPLE.COM" in conf and f"kdc = 127.0.0.1:{kdc.port}" in conf
        socket.create_connection(("127.0.0.1", kdc.port), timeout=5).close()
        directory, port, pid = kdc.directory, kdc.port, kdc.pid
    finally:
        kdc.close()
    assert not directory.exists()
    assert pid is not None and not Path(f"/proc/{pid}").exists()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


@pytest.mark.skipif(
    not local_mode_obtains_tokens(),
    reason="this PySpark's local mode starts no delegation token manager (Spark 4.2+)",
)
def test_spark_obtains_the_token_itself_and_a_stream_reads_and_writes_with_it(
    secured: Callable[[str], Broker], kdc: Kdc, backend: str, tmp_path: Path
) -> None:
    broker = secured("sasl_plaintext")
    source, sink = f"orders-spark-token-{backend}", f"orders-spark-token-out-{backend}"
    broker.create_topic(source, partitions=2)
    broker.create_topic(sink, partitions=2)
    orders = [{"order_id": f"o-{i}", "customer": f"c{i % 3}", "amount": i * 1.5} for i in range(9)]
    seeded = seed(broker, source, orders, key_field="customer", id_field="order_id")
    conf = token_provider_conf(broker, kdc, "alice", cluster="orders")
    assert conf["spark.kafka.clusters.orders.auth.bootstrap.servers"] == broker.bootstrap_servers

    args = {
        "conf": conf,
        "bootstrap": broker.bootstrap_servers,
        "source": source,
        "sink": sink,
        "checkpoint": str(tmp_path / "checkpoint"),
    }
    root = str(Path(kafkatest.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run(
        [sys.executable, "-c", JOB, json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=540,
        env=env,
        cwd=tmp_path,
    )
    said = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert run.returncode == 0 and said, (
        f"the job failed:\n{run.stdout[-3000:]}{run.stderr[-6000:]}"
    )
    result = json.loads(said[-1].removeprefix("RESULT "))
    # The driver logged in to Kerberos and holds the token Spark's provider obtained.
    assert result == {"security": True, "tokens": ["kafka.server.delegation.token.orders"]}
    assert assert_exactly_once(seeded, topic_rows(broker, sink)).ok
