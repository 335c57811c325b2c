"""Looking a topic up without creating it, on every backend.

A Metadata request that names a topic makes a broker with
auto.create.topics.enable create it, so "does it exist?" must be asked another
way: the emulator's own state, or DescribeTopics, which never creates.
"""

from __future__ import annotations

from typing import Any

from kafkatest.brokers.capabilities import Capability
from kafkatest.brokers.client import ClientOperations
from kafkatest.errors import BrokerError


def topic_partitions(broker: ClientOperations, topic: str) -> int | None:
    """The topic's partition count, None if it does not exist; never creates it.

    A backend whose state is in process (the emulator) is asked on its own thread (so this works while it is paused);
    other backends through DescribeTopics, which never auto-creates a topic (a
    Metadata request naming it could, with auto.create.topics.enable).
    """
    if Capability.STATE in getattr(broker, "capabilities", ()):
        emulator: Any = broker
        state = emulator.state

        def lookup() -> int | None:
            found = state.topics.find(topic)
            return None if found is None else len(found.partitions)

        return emulator.call(lookup)  # type: ignore[no-any-return]
    from confluent_kafka import KafkaError, KafkaException, TopicCollection

    futures = broker.admin().describe_topics(TopicCollection([topic]), request_timeout=10)
    try:
        description = futures[topic].result(timeout=15)
    except KafkaException as exc:
        error = exc.args[0] if exc.args else None
        if isinstance(error, KafkaError) and error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
            return None
        raise BrokerError(f"describing topic {topic!r} failed: {error or exc}") from exc
    return len(description.partitions)
