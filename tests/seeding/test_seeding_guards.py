"""seed() refuses values JSON cannot carry and warns before a topic is auto-created.

Both on every backend: NaN is refused before anything is produced, and the topic
lookup behind the warning never creates the topic itself.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import pytest

from kafkatest.brokers.base import Broker
from kafkatest.seeding import SeedAutoCreateWarning, seed
from kafkatest.seeding.retention import SeedRetentionWarning


@pytest.mark.parametrize(
    ("values", "index"),
    [
        ([{"amount": 1.5}, {"amount": math.nan}], 1),
        ([{"nested": {"rates": [1.0, math.inf]}}], 0),
        ([{"ok": 1}, {"ok": 2}, [-math.inf]], 2),
        ([{"key": "a"}, {"value": {"x": math.nan}, "key": "b"}], 1),
    ],
)
def test_nan_and_infinities_are_refused_naming_the_record(
    kafka_broker: Broker, kafka_topic: Callable[..., str], values: list[object], index: int
) -> None:
    topic = kafka_topic()

    with pytest.raises(ValueError, match=rf"item {index} \(id '{index}'\): its value holds NaN"):
        seed(kafka_broker, topic, values)

    assert kafka_broker.latest_offsets(topic) == {0: 0}


def test_a_nan_key_field_is_refused_too(
    kafka_broker: Broker, kafka_topic: Callable[..., str]
) -> None:
    topic = kafka_topic()
    with pytest.raises(ValueError, match=r"item 0 \(id '0'\): its value holds NaN"):
        seed(kafka_broker, topic, [{"k": [math.nan]}], key_field="k")
    assert kafka_broker.latest_offsets(topic) == {0: 0}


def test_seeding_a_topic_that_does_not_exist_warns(
    kafka_broker: Broker, kafka_topic: Callable[..., str]
) -> None:
    missing = kafka_topic() + "-typo"
    assert missing not in kafka_broker.list_topics()

    with pytest.warns(SeedAutoCreateWarning, match=f"topic '{missing}' does not exist") as caught:
        result = seed(kafka_broker, missing, [{"n": 1}, {"n": 2}])

    assert "Create it first" in str(caught[0].message)
    assert len(result.records) == 2
    try:
        assert missing in kafka_broker.list_topics()  # the broker did create it
    finally:
        kafka_broker.delete_topic(missing)


def test_seeding_an_existing_topic_does_not_warn(
    kafka_broker: Broker, kafka_topic: Callable[..., str]
) -> None:
    topic = kafka_topic(partitions=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeedAutoCreateWarning)
        warnings.simplefilter("error", SeedRetentionWarning)
        seed(kafka_broker, topic, [{"value": {"n": 1}, "partition": 1}])
    assert kafka_broker.latest_offsets(topic) == {0: 0, 1: 1}
