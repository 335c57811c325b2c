"""Answering a request that names the same thing many times, without holding the loop.

Kafka answers some requests once per naming: a DescribeConfigs naming a broker
10,000 times gets 10,000 identical results, an OffsetFetch naming a partition
twice gets it twice. Its request size limit (100 MB) is all that bounds the work,
and it does that work on a handler thread. The emulator serves every client on one
event loop, so `Answers` builds (and encodes) each distinct naming's answer once
per request, refers to that encoding wherever the naming stands (`EncodedItems`),
and gives the loop back between namings (`Pacer`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Iterable
from typing import Any, Generic, TypeVar

from kafkatest.emulator.protocol.messages import encode_entity
from kafkatest.emulator.protocol.replies import EncodedItems
from kafkatest.emulator.server.pacing import Pacer

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
P = TypeVar("P")
N = TypeVar("N", bound=Hashable)


class Answers(Generic[K]):
    """One request's answers by distinct naming (`key`), each built by `answer` once."""

    __slots__ = ("_known", "pacer")

    def __init__(self, pacer: Pacer | None = None) -> None:
        self.pacer = pacer or Pacer()
        self._known: dict[K, tuple[Any, bytes]] = {}

    async def each(
        self, items: Iterable[T], key: Callable[[T], K], answer: Callable[[T], Any]
    ) -> EncodedItems:
        """One answer per item, in order: built (`answer` may be a coroutine function)
        and encoded once per distinct key."""
        results: list[Any] = []
        pieces: list[bytes] = []
        known = self._known
        for item in items:
            identity = key(item)
            found = known.get(identity)
            if found is None:
                entity = answer(item)
                if inspect.isawaitable(entity):
                    entity = await entity
                found = known[identity] = (entity, encode_entity(entity))
            results.append(found[0])
            pieces.append(found[1])
            await self.pacer.breathe()
        return EncodedItems(results, pieces)


async def answer_topics(
    topics: Iterable[T],
    name_of: Callable[[T], N],
    partitions_of: Callable[[T], Iterable[P]],
    key_of: Callable[[P], Hashable],
    answer: Callable[[N, P], Any],
    topic_answer: Callable[[N, EncodedItems], Any],
    pacer: Pacer | None = None,
) -> EncodedItems:
    """The common shape, topics holding partitions: each topic entry (named by
    `name_of`: a name or an id) answered with `topic_answer(name, its partitions' answers)` and each partition with
    `answer(name, partition)`; a partition (by name and `key_of`) or a topic entry
    (by name and partitions) named again reuses its first answer."""
    pacer = pacer or Pacer()
    partitions: Answers[tuple[N, Hashable]] = Answers(pacer)

    async def one_topic(topic: T) -> Any:
        name = name_of(topic)
        answered = await partitions.each(
            partitions_of(topic), lambda p: (name, key_of(p)), lambda p: answer(name, p)
        )
        return topic_answer(name, answered)

    entries: Answers[tuple[N, tuple[Hashable, ...]]] = Answers(pacer)
    return await entries.each(
        topics, lambda t: (name_of(t), tuple(map(key_of, partitions_of(t)))), one_topic
    )


async def each_partition(
    topics: Iterable[T],
    partitions_of: Callable[[T], Iterable[P]],
    answer: Callable[[T, P], Any],
    topic_answer: Callable[[T, EncodedItems], Any],
    pacer: Pacer,
) -> EncodedItems:
    """The common shape answered naming by naming (a partition named twice is answered
    twice, unlike `answer_topics`): each partition's `answer(topic, partition)` and
    each topic's `topic_answer(topic, its partitions' answers)` encoded as made
    (`Encoded`), the loop given back after each partition."""
    answered = Encoded()
    for topic in topics:
        partitions = Encoded()
        for partition in partitions_of(topic):
            partitions.add(answer(topic, partition))
            await pacer.breathe()
        answered.add(topic_answer(topic, partitions.items()))
    return answered.items()


class Encoded:
    """A response array whose entities are encoded as the handler makes them.

    Encoding a response is kio's work per entity (tens of microseconds each), done
    after the handler returns and without a pause: 50,000 DeleteRecords results took
    1.8 s. A handler that builds its array in a paced loop adds each entity here
    instead, so that encoding happens inside the loop's slices and the reply only
    refers to the pieces (`EncodedItems`).
    """

    __slots__ = ("_items", "_pieces")

    def __init__(self) -> None:
        self._items: list[Any] = []
        self._pieces: list[bytes] = []

    def add(self, entity: Any) -> None:
        self._items.append(entity)
        self._pieces.append(encode_entity(entity))

    def items(self) -> EncodedItems:
        return EncodedItems(self._items, self._pieces)
