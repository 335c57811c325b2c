"""Seeding a real broker: placement matches the log, also for 100k records."""

from __future__ import annotations

from kafkatest import Record
from kafkatest.seeding import fake_values, seed

SCHEMA = {"id": "seq", "user": "user_name", "email": "email", "city": "city"}


def test_seed_result_matches_the_log_end_offsets(kafka_broker, kafka_topic):
    topic = kafka_topic(partitions=3)
    result = seed(kafka_broker, topic, fake_values(SCHEMA, 500, seed=2), key_field="user")
    ends = kafka_broker.latest_offsets(topic)
    assert {p: len(offsets) for p, offsets in result.offsets_by_partition.items()} == {
        p: end for p, end in ends.items() if end
    }
    consumed = {(r.partition, r.offset): r for r in kafka_broker.consume(topic)}
    for record_id in ("0", "250", "499"):
        origin = result.where(record_id)
        assert (
            consumed[(origin.partition, origin.offset)].header("kafkatest.id") == record_id.encode()
        )


def test_seeding_100k_records(kafka_broker, kafka_topic):
    """At scale every record is placed and traceable (the time is in the closing notes)."""
    topic = kafka_topic(partitions=3)
    result = seed(kafka_broker, topic, fake_values(SCHEMA, 100_000, seed=1), key_field="user")
    assert len(result) == 100_000
    assert sum(kafka_broker.latest_offsets(topic).values()) == 100_000
    assert sum(len(v) for v in result.offsets_by_partition.values()) == 100_000


def test_reading_back_asks_the_client_for_no_more_than_is_left(
    kafka_broker, kafka_topic, monkeypatch
):
    """librdkafka's consume() returns early only with a full batch: asking it for
    10,000 records of a 30-record topic made every read-back wait out its timeout."""
    from kafkatest.brokers import client

    asked: list[int] = []

    class RecordingConsumer(client.Consumer):  # type: ignore[misc]
        def consume(self, num_messages: int = 1, timeout: float = -1) -> list:
            asked.append(num_messages)
            return super().consume(num_messages=num_messages, timeout=timeout)

    monkeypatch.setattr(client, "Consumer", RecordingConsumer)
    topic = kafka_topic(partitions=2)
    kafka_broker.produce(
        Record(topic=topic, value=str(i).encode(), key=b"k%d" % i) for i in range(30)
    )
    assert sorted(int(r.value) for r in kafka_broker.consume(topic)) == list(range(30))
    assert asked and max(asked) <= 30
