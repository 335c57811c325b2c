"""A capture around a consumer group's committed offset reads the records before and after
it without joining the group; replayed, they keep their original offsets on the emulator
(its log starts at the first captured offset) and are shifted on Kafka, with the mapping."""

from __future__ import annotations

from pathlib import Path

from confluent_kafka import Consumer, TopicPartition

from kafkatest import Broker
from kafkatest.brokers.capabilities import Capability
from kafkatest.cli import main
from kafkatest.seeding import seed


def _commit(broker: Broker, group: str, topic: str, offset: int) -> None:
    consumer = Consumer({**broker.client_config(), "group.id": group})
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
    finally:
        consumer.close()


def _committed(broker: Broker, group: str, topic: str) -> int:
    consumer = Consumer({**broker.client_config(), "group.id": group})
    try:
        (found,) = consumer.committed([TopicPartition(topic, 0)], timeout=30)
    finally:
        consumer.close()
    return int(found.offset)


def test_a_capture_around_a_group_replays_at_its_offsets(
    kafka_broker: Broker, tmp_path: Path
) -> None:
    topic, target, group = (
        f"cap-grp-{tmp_path.name[-10:]}",
        f"cap-rep-{tmp_path.name[-10:]}",
        "payments-job",
    )
    kafka_broker.create_topic(topic, partitions=1)
    seed(kafka_broker, topic, [{"n": n} for n in range(10)])
    _commit(kafka_broker, group, topic, 6)
    out = tmp_path / "incident.jsonl"
    code = main(
        [
            *("capture", "--bootstrap", kafka_broker.bootstrap_servers, "--topic", topic),
            *("--group", group, "--before", "3", "--after", "2", "-o", str(out)),
            *[f"-X{key}={value}" for key, value in _security(kafka_broker).items()],
        ]
    )
    assert code == 0
    assert _committed(kafka_broker, group, topic) == 6  # read, never committed

    kafka_broker.create_topic(target, partitions=1)
    result = seed(kafka_broker, target, out)
    values = [r.value for r in kafka_broker.consume(target)]
    assert values == [f'{{"n":{n}}}'.encode() for n in range(3, 8)]
    on_emulator = Capability.STATE in kafka_broker.capabilities
    landed = [result.offsets[(0, n)] for n in range(3, 8)]  # type: ignore[attr-defined]
    assert landed == (list(range(3, 8)) if on_emulator else list(range(5)))
    assert result.shifted is not on_emulator  # type: ignore[attr-defined]


def _security(broker: Broker) -> dict[str, str]:
    """The harness's own client settings beyond the address (none on a plain broker)."""
    skip = {"bootstrap.servers", "client.id", "logger"}
    return {k: str(v) for k, v in broker.client_config().items() if k not in skip}
