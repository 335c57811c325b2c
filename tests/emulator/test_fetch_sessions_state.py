"""The fetch session cache stays bounded whatever clients ask (Kafka's own rules).

Kafka keeps at most ``max.incremental.fetch.session.cache.slots`` (1000) sessions per
broker; the wire behaviour of sessions is checked on both backends in
test_api_surface_wire.py.
"""

from __future__ import annotations

from kafkatest.emulator.state.fetch_sessions import (
    FetchSessionCache,
    PartitionKey,
    SessionPartition,
)


def partitions(count: int) -> dict[PartitionKey, SessionPartition]:
    return {("t", i): SessionPartition("t", None, i, 0, 1024, -1) for i in range(count)}


def test_a_full_cache_evicts_a_smaller_session_or_declines() -> None:
    cache = FetchSessionCache(max_sessions=2)
    first = cache.create(False, partitions(2))
    second = cache.create(False, partitions(2))
    assert first is not None and second is not None and len(cache) == 2

    # Not bigger than any session kept, none idle: no session (the client fetches in full).
    assert cache.create(False, partitions(2)) is None
    assert len(cache) == 2

    # A bigger one evicts the least recently used.
    bigger = cache.create(False, partitions(3))
    assert bigger is not None and len(cache) == 2
    assert cache.get(first.session_id) is None and cache.get(second.session_id) is second


def test_session_epochs_wrap_to_one() -> None:
    cache = FetchSessionCache()
    session = cache.create(True, {})
    assert session is not None and session.epoch == 1
    session.epoch = 2**31 - 1
    session.advance()
    assert session.epoch == 1
