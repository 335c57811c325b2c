"""A Spark job with its production security options, on every backend.

Each case is what a job meets in production: the happy path (the sample job on
SASL_SSL with SCRAM-SHA-512, options from `broker.spark_options(user)` exactly as
a job carries them), a stream that logs in with a delegation token (what Spark's
executors use once its driver holds one), a wrong password, and a truststore that
does not trust the broker. The exception text each one ends in is listed in docs/how-to/security.md; the assertions hold it on the emulator and on real Kafka alike.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import orders_enrichment as job
import pytest

from kafkatest import Broker, Record
from kafkatest.assertions import assert_exactly_once
from kafkatest.scenarios.jobs import copy_stream
from kafkatest.security.tls import CertificateAuthority
from kafkatest.seeding import seed
from kafkatest.sinks import topic_rows
from kafkatest.spark import wait_for_query

pytestmark = pytest.mark.spark

T0 = (int(time.time()) - 3600) * 1000


def _job_options(broker: Broker, user: str, **changes: str) -> dict[str, str]:
    """The job's kafka.* options, without the bootstrap servers (the job's own argument)."""
    options = broker.spark_options(user)
    options.pop("kafka.bootstrap.servers")
    options.update(changes)
    return options


def _seed(broker: Broker, topic: str) -> None:
    broker.create_topic(topic, partitions=2)
    broker.produce(
        [
            Record.make(
                topic,
                {"order_id": f"o-{i}", "customer": "c", "amount": 10.0, "currency": "USD"},
                key=f"o-{i}",
                headers={"source": "web"},
                partition=i % 2,
                timestamp_ms=T0 + i,
            )
            for i in range(6)
        ]
    )


def test_the_sample_job_runs_end_to_end_on_sasl_ssl_with_scram(
    spark, secured: Callable[[str], Broker], checkpoint_dir: Path, backend: str
) -> None:
    broker = secured("sasl_ssl")
    source, sink = f"orders-secure-{backend}", f"orders-secure-out-{backend}"
    _seed(broker, source)
    broker.create_topic(sink, partitions=1)
    options = _job_options(broker, "alice")
    assert options["kafka.security.protocol"] == "SASL_SSL"
    assert options["kafka.sasl.mechanism"] == "SCRAM-SHA-512"
    assert "ScramLoginModule" in options["kafka.sasl.jaas.config"]

    query = job.start_stream(
        spark, broker.bootstrap_servers, source, sink, str(checkpoint_dir), kafka_options=options
    )
    wait_for_query(query, timeout_s=240)

    out = broker.consume(sink)
    assert sorted(r.key_text() for r in out) == [f"o-{i}" for i in range(6)]
    assert json.loads(out[0].value)["amount_eur"] == 9.0


def test_a_streaming_job_reads_and_writes_with_a_delegation_token(
    spark, secured: Callable[[str], Broker], checkpoint_dir: Path, backend: str
) -> None:
    """Issue 34's "done when": the token, not alice's password, carries both ends.

    The options hold no password of alice's, so the source and the sink can only
    log in through SCRAM's ``tokenauth`` extension, as the token's owner.
    """
    broker = secured("sasl_ssl")
    source, sink = f"orders-token-{backend}", f"orders-token-out-{backend}"
    broker.create_topic(source, partitions=2)
    broker.create_topic(sink, partitions=2)
    orders = [{"order_id": f"o-{i}", "customer": f"c{i % 3}", "amount": i * 1.5} for i in range(12)]
    seeded = seed(broker, source, orders, key_field="customer", id_field="order_id")
    token = broker.create_token("alice")
    options = broker.spark_options(token=token)
    options.pop("kafka.bootstrap.servers")
    jaas = options["kafka.sasl.jaas.config"]
    assert f'username="{token.token_id}"' in jaas and 'tokenauth="true"' in jaas
    assert "alice-secret" not in jaas

    query = copy_stream(
        spark, broker.bootstrap_servers, source, sink, str(checkpoint_dir), kafka_options=options
    )
    wait_for_query(query, timeout_s=240)

    assert assert_exactly_once(seeded, topic_rows(broker, sink)).ok


def test_a_job_with_a_wrong_password_fails_with_the_brokers_message(
    spark, secured: Callable[[str], Broker], backend: str
) -> None:
    broker = secured("sasl_ssl")
    source = f"orders-wrong-password-{backend}"
    _seed(broker, source)
    jaas = _job_options(broker, "alice")["kafka.sasl.jaas.config"].replace(
        "alice-secret", "not-the-password"
    )
    options = _job_options(broker, "alice", **{"kafka.sasl.jaas.config": jaas})

    with pytest.raises(Exception) as failure:
        job.read_orders(
            spark, broker.bootstrap_servers, source, streaming=False, kafka_options=options
        ).count()

    text = str(failure.value)
    assert "SaslAuthenticationException" in text
    assert (
        "Authentication failed during authentication due to invalid credentials with SASL "
        "mechanism SCRAM-SHA-512" in text
    )


def test_a_truststore_that_does_not_trust_the_broker_fails_the_tls_handshake(
    spark, secured: Callable[[str], Broker], backend: str, tmp_path: Path
) -> None:
    broker = secured("sasl_ssl")
    source = f"orders-untrusted-{backend}"
    _seed(broker, source)
    stranger = CertificateAuthority(tmp_path / "stranger", name="some other CA")
    options = _job_options(
        broker, "alice", **{"kafka.ssl.truststore.location": str(stranger.ca_pem)}
    )

    with pytest.raises(Exception) as failure:
        job.read_orders(
            spark, broker.bootstrap_servers, source, streaming=False, kafka_options=options
        ).count()

    text = str(failure.value)
    assert "SslAuthenticationException: SSL handshake failed" in text
    assert "PKIX path building failed" in text


def test_a_scenario_runs_on_a_secured_broker(
    spark, secured: Callable[[str], Broker], checkpoint_dir: Path, backend: str
) -> None:
    from kafkatest.scenarios import Expectations, Scenario, SeedSpec, run_scenario

    scenario = Scenario(
        name=f"secured-copy-{backend}",
        job="kafkatest.scenarios.jobs:copy_stream",
        topics={"src": 2, "sink": 1},
        source="src",
        sink="sink",
        seed=[SeedSpec("all", "src", 10)],
        expect=Expectations(outcome="finishes", delivery="exactly_once"),
        timeout_s=180,
    )

    result = run_scenario(scenario, secured("sasl_ssl"), spark, checkpoint_dir)

    assert result.ok, result.text()
