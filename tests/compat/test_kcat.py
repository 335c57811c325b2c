"""kcat (librdkafka's command-line client) against every backend.

Run with ``--kafka-backend=emulator,kafka``. kcat comes from the system's packages
(Debian: ``apt-get install kcat``); without it these tests are skipped, saying so.
librdkafka logs problems on stderr as ``%<level>|...`` with level 0-4 meaning
emergency to warning; any such line fails a test, even when kcat exits 0.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from kafkatest import Broker

KCAT = shutil.which("kcat")
pytestmark = pytest.mark.skipif(KCAT is None, reason="kcat is not installed (apt-get install kcat)")
_LOGGED_PROBLEM = re.compile(r"^%[0-4]\|", re.MULTILINE)


def kcat(broker: Broker, *args: str, input_text: str | None = None) -> str:
    """Run kcat against `broker`; its stdout, after checking it succeeded quietly."""
    assert KCAT is not None
    result = subprocess.run(
        [KCAT, "-b", broker.bootstrap_servers, *args],
        input=input_text if input_text is not None else "",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    report = f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 0, report
    assert not _LOGGED_PROBLEM.search(result.stderr), report
    return result.stdout


def test_metadata_lists_brokers_topic_partitions_and_leaders(
    kafka_broker: Broker, kafka_topic
) -> None:
    topic = kafka_topic(partitions=3)
    metadata = json.loads(kcat(kafka_broker, "-L", "-J", "-t", topic))
    broker_ids = {b["id"] for b in metadata["brokers"]}
    assert metadata["controllerid"] in broker_ids
    [described] = metadata["topics"]
    assert described["topic"] == topic and "error" not in described
    partitions = sorted(described["partitions"], key=lambda p: p["partition"])
    assert [p["partition"] for p in partitions] == [0, 1, 2]
    for partition in partitions:
        assert partition["leader"] in broker_ids and "error" not in partition
        assert partition["replicas"] == partition["isrs"] == [{"id": partition["leader"]}]


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_keyed_messages_with_headers_round_trip_compressed(
    kafka_broker: Broker, kafka_topic, codec: str
) -> None:
    topic = kafka_topic(partitions=2)
    lines = [f"key-{i}:value-{i}-{codec}" for i in range(20)]
    kcat(
        kafka_broker, "-P", "-t", topic, "-K:", "-z", codec, "-H", "source=kcat", "-H",
        f"codec={codec}", input_text="\n".join(lines) + "\n",
    )  # fmt: skip

    consumed = kcat(kafka_broker, "-C", "-t", topic, "-e", "-o", "beginning", "-J")
    messages = [json.loads(line) for line in consumed.splitlines() if line.strip()]
    assert sorted((m["key"], m["payload"]) for m in messages) == sorted(
        tuple(line.split(":", 1)) for line in lines
    )
    assert {tuple(m["headers"]) for m in messages} == {("source", "kcat", "codec", codec)}
    # The other client agrees record by record, at the same partitions and offsets.
    stored = kafka_broker.consume(topic)
    assert sorted((m["partition"], m["offset"], m["key"]) for m in messages) == sorted(
        (r.partition, r.offset, r.key.decode()) for r in stored if r.key is not None
    )


def test_consumer_format_string_prints_key_value_headers_partition_offset(
    kafka_broker: Broker, kafka_topic
) -> None:
    topic = kafka_topic()
    kcat(
        kafka_broker, "-P", "-t", topic, "-K:", "-H", "trace=t-1",
        input_text="k1:first\nk2:second\n",
    )  # fmt: skip
    printed = kcat(
        kafka_broker, "-C", "-t", topic, "-e", "-o", "beginning", "-f", "%k %s %h %p %o\\n"
    )
    assert printed.splitlines() == ["k1 first trace=t-1 0 0", "k2 second trace=t-1 0 1"]
