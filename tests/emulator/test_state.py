"""Broker state without the wire: logs, retention, timestamps, producers."""

from __future__ import annotations

import pytest
from batch_builder import build_batch
from wall_clock import racing_wall_clock

from kafkatest.emulator.protocol.batches import read_header, split_batches
from kafkatest.emulator.state import BrokerSettings, EmulatorState
from kafkatest.emulator.state.errors import (
    InvalidConfig,
    InvalidPartitions,
    InvalidProducerEpoch,
    OffsetOutOfRange,
    OutOfOrderSequence,
    TopicAlreadyExists,
)


def _append(state: EmulatorState, topic: str, batch: bytes) -> int:
    [(header, raw)] = split_batches(batch)
    return state.append(state.topics.get(topic), 0, header, raw).base_offset


def test_offsets_and_reads_by_whole_batches() -> None:
    state = EmulatorState()
    state.create_topic("t")
    assert _append(state, "t", build_batch([b"a", b"b", b"c"])) == 0
    assert _append(state, "t", build_batch([b"d"])) == 3
    log = state.log_of("t", 0)
    assert (log.log_start_offset, log.high_watermark) == (0, 4)
    batches = log.read(1, 1_000_000, at_least_one=True)
    assert [read_header(b).base_offset for b in batches] == [0, 3]
    assert log.read(4, 1_000_000, at_least_one=True) == []
    assert len(log.read(0, 1, at_least_one=True)) == 1, "the first batch ignores the byte limit"
    assert log.read(0, 1, at_least_one=False) == []
    with pytest.raises(OffsetOutOfRange):
        log.read(5, 100, at_least_one=True)


def test_timestamp_lookups_decode_only_the_batch_they_need() -> None:
    state = EmulatorState()
    state.create_topic("t")
    _append(state, "t", build_batch([b"a", b"b"], timestamps=[100, 500]))
    _append(state, "t", build_batch([b"c", b"d"], timestamps=[300, 400]))
    log = state.log_of("t", 0)
    assert log.offset_for_timestamp(0) == (0, 100)
    assert log.offset_for_timestamp(200) == (1, 500)
    assert log.offset_for_timestamp(501) is None
    assert log.max_timestamp() == (1, 500)


def test_retention_waits_for_the_check_interval_on_the_clock() -> None:
    state = EmulatorState(settings=BrokerSettings(retention_check_interval_ms=1000))
    state.clock.freeze()  # the interval is the clock's: no wall time may count towards it
    state.enforce_retention()  # a check now (nothing to delete): the interval starts here
    # segment.ms puts the two batches (120 s apart) in two segments, which retention
    # deletes one by one.
    state.create_topic("t", configs={"retention.ms": "60000", "segment.ms": "60000"})
    now = state.clock.now_ms()
    _append(state, "t", build_batch([b"old"], timestamps=[now - 120_000]))
    _append(state, "t", build_batch([b"new"], timestamps=[now]))
    state.maybe_enforce_retention()
    assert state.log_of("t", 0).log_start_offset == 0, "not before the check interval"
    state.clock.advance(1000)
    state.maybe_enforce_retention()
    assert state.log_of("t", 0).log_start_offset == 1
    state.clock.advance(61_000)
    state.enforce_retention()
    log = state.log_of("t", 0)
    assert (log.log_start_offset, log.log_end_offset, log.batch_count) == (2, 2, 0)


def test_retention_by_bytes_keeps_the_newest_segments() -> None:
    state = EmulatorState()
    batch = build_batch([b"x" * 100], timestamps=[state.clock.now_ms()])
    state.create_topic(
        "t",
        configs={"retention.bytes": str(2 * len(batch)), "internal.segment.bytes": str(len(batch))},
    )
    for _ in range(5):
        _append(state, "t", batch)
    state.enforce_retention()
    assert state.log_of("t", 0).log_start_offset == 3


def test_delete_records_moves_the_log_start() -> None:
    state = EmulatorState()
    topic = state.create_topic("t")
    assert topic is not None
    _append(state, "t", build_batch([b"a", b"b", b"c"]))
    assert state.delete_records(topic, 0, 2) == 2
    assert state.delete_records(topic, 0, -1) == 3
    with pytest.raises(OffsetOutOfRange):
        state.delete_records(topic, 0, 4)


def test_topic_rules() -> None:
    state = EmulatorState(brokers=3)
    topic = state.create_topic("t", partitions=6)
    assert topic is not None
    assert sorted({p.leader_id for p in topic.partitions}) == [1, 2, 3]
    with pytest.raises(TopicAlreadyExists):
        state.create_topic("t")
    with pytest.raises(InvalidConfig):
        state.create_topic("u", configs={"message.timestamp.type": "Sometimes"})
    with pytest.raises(InvalidPartitions):
        state.add_partitions("t", 6)
    state.add_partitions("t", 8)
    assert len(state.topics.get("t").partitions) == 8


def test_producer_ids_epochs_and_sequences() -> None:
    state = EmulatorState()
    producers = state.producers
    pid, epoch = producers.init_producer()
    assert epoch == 0
    assert producers.init_producer(pid, 0) == (pid, 1)
    with pytest.raises(InvalidProducerEpoch):
        producers.init_producer(pid, 0)
    state.create_topic("t")
    batch = build_batch([b"a"], producer_id=pid, producer_epoch=1, base_sequence=0)
    assert _append(state, "t", batch) == 0
    assert _append(state, "t", batch) == 0, "duplicate answered with the original offset"
    with pytest.raises(OutOfOrderSequence):
        _append(state, "t", build_batch([b"b"], producer_id=pid, producer_epoch=1, base_sequence=5))
    assert state.log_of("t", 0).log_end_offset == 1


def test_the_retention_interval_holds_however_slowly_the_test_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a second of wall time between readings (a loaded machine), the interval
    test above still holds: it counts on the broker's frozen clock only."""
    racing_wall_clock(monkeypatch)
    test_retention_waits_for_the_check_interval_on_the_clock()
