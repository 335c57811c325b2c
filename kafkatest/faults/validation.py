"""Every fault is checked before it is made: one that cannot fire is refused.

A rule aimed at a topic that does not exist, a partition past the topic's end or
an API the emulator does not serve would sit in the hook and never hit; the test
would then pass without its fault. A negative clock step or a latency longer
than any test waits would break the run in a confusing place. So each `Faults`
method checks its arguments here first and raises `InvalidFault`, whose message
names the action, the value and what would be accepted. The control interface
runs the same methods, so HTTP callers get the same messages (as status 400).

Adding a fault action (``compact_now``, ``hung_transaction``, ...):

1. In its `Faults` method, check before acting::

       def compact_now(self, topic: str, partition: int | None = None) -> None:
           check.target(self.broker, "compact_now", topic, partition)
           ...

   `target` / `existing_topic` (here) look the topic up on every backend
   (emulator state, or Kafka's metadata through the admin client, never
   auto-creating); `checks.count`, `non_negative`, `at_most` check numbers, `api`
   and `error` names (`kafkatest.emulator.checks`, which hold on every backend).
   Raise `InvalidFault` yourself for anything specific to the action.
2. List it in `control_actions.ACTIONS` with its parameter types, so
   ``POST /faults/compact_now`` and ``kafkatest fault compact_now`` accept it.

Checks run before anything is changed, so a refused fault leaves no trace.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from kafkatest.brokers.base import Broker
from kafkatest.brokers.capabilities import Capability
from kafkatest.brokers.lookup import topic_partitions
from kafkatest.emulator import InvalidFault, checks

MAX_LATENCY_MS = checks.MAX_LATENCY_MS

__all__ = [
    "MAX_LATENCY_MS",
    "InvalidFault",
    "existing_partitions",
    "existing_topic",
    "missing_topic",
    "target",
]

#: How many existing names an error message lists.
_LISTED = 10


# -- topics and partitions (every backend) ---------------------------------------------


def _topic_names(broker: Broker) -> list[str]:
    try:
        if broker.can(Capability.STATE):
            state = broker.state  # type: ignore[attr-defined]
            return broker.call(  # type: ignore[attr-defined,no-any-return]
                lambda: sorted(t.name for t in state.topics if not t.is_internal)
            )
        return broker.list_topics()
    except Exception:  # only for the message: a listing failure must not hide the real error
        return []


def missing_topic(broker: Broker, action: str, topic: str) -> InvalidFault:
    """The error for a topic that does not exist: what exists, and the nearest name."""
    names = _topic_names(broker)
    close = difflib.get_close_matches(topic, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    listed = ", ".join(names[:_LISTED]) + (
        f" and {len(names) - _LISTED} more" if len(names) > _LISTED else ""
    )
    return InvalidFault(
        f"{action}: topic {topic!r} does not exist (topics: {listed or 'none'}){hint}"
    )


def existing_topic(broker: Broker, action: str, topic: object) -> int:
    """Refuse a missing topic; its partition count."""
    if not isinstance(topic, str) or not topic:
        raise InvalidFault(f"{action}: topic must be a topic name, not {topic!r}")
    partitions = topic_partitions(broker, topic)
    if partitions is None:
        raise missing_topic(broker, action, topic)
    return partitions


def _partition_range(topic: str, partitions: int) -> str:
    return (
        f"topic {topic!r} has partitions 0..{partitions - 1}"
        if partitions > 1
        else (f"topic {topic!r} has only partition 0")
    )


def target(broker: Broker, action: str, topic: object, partition: object = None) -> None:
    """Refuse a topic that does not exist or a partition outside it.

    `topic` None means "every topic" (then `partition` must be None too).
    """
    if topic is None:
        if partition is not None:
            raise InvalidFault(f"{action}: a partition needs its topic (give topic too)")
        return
    partitions = existing_topic(broker, action, topic)
    if partition is None:
        return
    index = checks.whole_number(action, "partition", partition)
    if not 0 <= index < partitions:
        raise InvalidFault(
            f"{action}: partition {index} does not exist: {_partition_range(str(topic), partitions)}"
        )


def existing_partitions(broker: Broker, action: str, topic: str, wanted: Iterable[int]) -> int:
    """Refuse partitions outside the topic (naming them and which exist); the count."""
    indexes = [checks.whole_number(action, "partition", p) for p in wanted]
    partitions = existing_topic(broker, action, topic)
    missing = sorted(p for p in indexes if not 0 <= p < partitions)
    if missing:
        raise InvalidFault(
            f"{action}: partition(s) {missing} do not exist: {_partition_range(topic, partitions)}"
        )
    return partitions
