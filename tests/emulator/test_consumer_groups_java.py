"""Java kafka-clients 4.1 consumers with ``group.protocol=consumer``, on every backend.

Spark's executors use kafka-clients; here two of its consumers share a group through
ConsumerGroupHeartbeat (run with ``--kafka-backend=emulator,kafka``): the Java
client's own reconciliation (revoke, then acknowledge, then receive) must settle on
the emulator exactly as on Kafka.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from kafkatest import Broker
from kafkatest.apps.tools import kafka_tools_classpath

JAVA_DIR = Path(__file__).parent / "java"

pytestmark = pytest.mark.kafka_min_version(
    "4.0", "KIP-848 consumer groups are generally available from Kafka 4.0 (off in 3.9)"
)


def test_two_java_consumers_split_a_topic_and_one_takes_it_back(
    kafka_broker: Broker, kafka_topic
) -> None:
    java = shutil.which("java")
    if java is None:
        pytest.skip("no java on PATH")
    topic, group = kafka_topic(partitions=4), f"kip848-java-{uuid.uuid4().hex[:8]}"
    run = subprocess.run(
        [
            java,
            "-Xmx256m",
            "-cp",
            kafka_tools_classpath(),
            str(JAVA_DIR / "ConsumerProtocolGroup.java"),
            kafka_broker.bootstrap_servers,
            topic,
            group,
            "4",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == [
        "alone [0, 1, 2, 3]",
        "shared 2 2 [0, 1, 2, 3]",
        "back [0, 1, 2, 3]",
    ]
