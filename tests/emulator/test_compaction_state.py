"""Segments, retention by segment and the log cleaner, in the broker state (no wire).

These pin the rules that `tests/faults/test_compaction.py` shows against real Kafka
where only the emulator can show them cheaply: its clock moves on demand, so delete
horizons and compaction lags pass without waiting, and a cleaner that does *not* run
can be observed.
"""

from __future__ import annotations

import inspect
import struct
from typing import Any

import pytest
from batch_builder import encode_record
from crc32c import crc32c
from wall_clock import racing_wall_clock

from kafkatest.emulator.protocol.batches import CRC_START, read_header, split_batches
from kafkatest.emulator.protocol.record_rewrite import decode_records, has_delete_horizon
from kafkatest.emulator.state import EmulatorState
from kafkatest.emulator.state.errors import InvalidConfig, RecordsRejected
from kafkatest.emulator.state.log import PartitionLog


def _append(state: EmulatorState, topic: str, batch: bytes) -> int:
    [(header, raw)] = split_batches(batch)
    return state.append(state.topics.get(topic), 0, header, raw).base_offset


def _keyed(
    state: EmulatorState, topic: str, pairs: list[tuple[bytes | None, bytes | None]], ts: int
) -> int:
    """Append one batch of (key, value) records, all at timestamp `ts`."""
    return _append(state, topic, _batch(pairs, ts))


def _batch(pairs: list[tuple[bytes | None, bytes | None]], ts: int) -> bytes:
    records = b"".join(encode_record(i, 0, k, v) for i, (k, v) in enumerate(pairs))
    count = len(pairs)
    after_crc = struct.pack(">hiqqqhii", 0, count - 1, ts, ts, -1, -1, -1, count) + records
    body = struct.pack(">ibI", -1, 2, crc32c(after_crc)) + after_crc
    return struct.pack(">qi", 0, len(body)) + body


def _visible(log: PartitionLog) -> list[tuple[int, bytes | None, bool]]:
    """(offset, key, has value) of every record a reader from the log start gets."""
    out = []
    for batch in log.read(log.log_start_offset, 1 << 30, at_least_one=True):
        header = read_header(batch)
        assert crc32c(batch[CRC_START:]) == header.crc, "the cleaner's rewrites carry a right CRC"
        out.extend((r.offset, r.key, r.has_value) for r in decode_records(header, batch))
    return out


def _state(**configs: str) -> tuple[EmulatorState, PartitionLog]:
    """A compacted topic on a frozen clock: the tests give records timestamps a few ms
    apart from `now`, and compact_now stamps its marker with the clock's now, so on a
    running clock a loaded machine (tens of ms between two statements) put the marker
    after the next records and rolled the segments otherwise (issue 44, item 12)."""
    state = EmulatorState()
    state.clock.freeze()
    state.create_topic("t", configs={"cleanup.policy": "compact", **configs})
    return state, state.log_of("t", 0)


def test_segments_roll_on_append_by_bytes_and_by_record_time() -> None:
    state, log = _state(**{"internal.segment.bytes": "200", "segment.ms": "1000"})
    now = state.clock.now_ms()
    _keyed(state, "t", [(b"a", b"x" * 50)], now)
    _keyed(state, "t", [(b"b", b"x" * 50)], now)  # 2 x ~120 bytes > 200: rolls
    _keyed(state, "t", [(b"c", b"1")], now + 999)  # same segment: 999 ms is not > 1000
    _keyed(state, "t", [(b"d", b"1")], now + 1001)  # 1001 ms after the first: rolls
    assert [s.base_offset for s in log.segments] == [0, 1, 3]
    state.clock.advance(10_000)
    state.run_cleaner()
    assert [s.base_offset for s in log.segments][-1] == 3, "no timer rolls an idle segment"


def test_a_compacted_topic_also_rolls_by_max_compaction_lag() -> None:
    state, log = _state(**{"max.compaction.lag.ms": "1000"})
    now = state.clock.now_ms()
    _keyed(state, "t", [(b"a", b"1")], now)
    _keyed(state, "t", [(b"a", b"2")], now + 1000)
    _keyed(state, "t", [(b"a", b"3")], now + 1001)
    assert [s.base_offset for s in log.segments] == [0, 2]
    state.set_topic_config("t", "cleanup.policy", "delete")
    _keyed(state, "t", [(b"a", b"4")], now + 5000)
    assert [s.base_offset for s in log.segments] == [0, 2], "only compacted topics do"


def test_segment_bytes_below_one_mebibyte_is_refused_but_the_internal_setting_is_not() -> None:
    state = EmulatorState()
    with pytest.raises(InvalidConfig, match="Value must be at least 1048576"):
        state.create_topic("t", configs={"segment.bytes": "1000"})
    state.create_topic("u", configs={"internal.segment.bytes": "1000"})


def test_retention_deletes_whole_segments_only() -> None:
    state = EmulatorState()
    state.clock.freeze()
    state.create_topic("t", configs={"retention.ms": "60000"})
    now = state.clock.now_ms()
    _keyed(state, "t", [(b"a", b"old")], now - 120_000)
    _keyed(state, "t", [(b"a", b"new")], now)
    state.enforce_retention()
    log = state.log_of("t", 0)
    assert log.log_start_offset == 0, "the one segment still holds a young record"
    state.clock.advance(61_000)
    state.enforce_retention()
    assert (log.log_start_offset, log.log_end_offset, log.batch_count) == (2, 2, 0)
    assert [s.base_offset for s in log.segments] == [2], "a new empty segment was rolled"


def test_the_cleaner_waits_for_the_dirty_ratio_on_the_broker_clock() -> None:
    state, log = _state(**{"segment.ms": "1"})
    now = state.clock.now_ms()
    _keyed(state, "t", [(b"a", b"1"), (b"b", b"1")], now)
    _keyed(state, "t", [(b"a", b"2")], now + 10)  # rolls: [0, 1] is closed
    state.maybe_enforce_retention()
    assert [o for o, _, _ in _visible(log)] == [0, 1, 2], "not before the cleaner backoff"
    state.clock.advance(state.settings.log_cleaner_backoff_ms)
    state.maybe_enforce_retention()
    assert [o for o, _, _ in _visible(log)] == [0, 1, 2], "nothing in [0, 1] is superseded yet"
    _keyed(state, "t", [(b"b", b"2")], now + 20)  # rolls: [2] closed, 1 batch dirty of 2
    state.run_cleaner()
    assert [o for o, _, _ in _visible(log)] == [0, 1, 2, 3], "dirty ratio below 0.5"
    _keyed(state, "t", [(b"c", b"2")], now + 30)  # rolls: [2, 3] dirty of 3 batches
    state.run_cleaner()
    assert [o for o, _, _ in _visible(log)] == [2, 3, 4]


def test_max_compaction_lag_forces_a_pass_the_ratio_would_not_allow() -> None:
    state, log = _state(**{"segment.ms": "1", "min.cleanable.dirty.ratio": "0.99"})
    now = state.clock.now_ms()
    _keyed(state, "t", [(b"a", b"1"), (b"b", b"1")], now)
    _keyed(state, "t", [(b"z", b"1")], now + 10)
    state.compact_now("t")  # cleans [0, 3); the marker at 3 rolled
    _keyed(state, "t", [(b"a", b"2")], now + 20)
    _keyed(state, "t", [(b"z", b"2")], now + 30)
    state.run_cleaner()
    assert (0, b"a", True) in _visible(log), "dirty ratio too low"
    state.set_topic_config("t", "max.compaction.lag.ms", "60000")
    state.clock.advance(60_001)
    state.run_cleaner()
    assert (0, b"a", True) not in _visible(log)


def test_a_tombstone_goes_once_its_delete_horizon_passes_on_the_broker_clock() -> None:
    state, log = _state(**{"delete.retention.ms": "60000"})
    now = state.clock.now_ms()
    _keyed(state, "t", [(b"a", b"1")], now)
    _keyed(state, "t", [(b"a", None)], now)
    before = state.clock.now_ms()
    state.compact_now("t")
    after = state.clock.now_ms()
    [tombstone] = [
        read_header(b) for b in log.read(0, 1 << 30, True) if read_header(b).base_offset == 1
    ]
    assert has_delete_horizon(tombstone), "the first pass stamps the horizon"
    assert before + 60_000 <= tombstone.base_timestamp <= after + 60_000
    state.compact_now("t")
    assert (1, b"a", False) in _visible(log), "before the horizon"
    state.clock.advance(60_001)
    state.compact_now("t")
    assert (1, b"a", False) not in _visible(log)


def test_keyless_records_are_refused_by_a_compacted_topic() -> None:
    state, log = _state()
    with pytest.raises(RecordsRejected) as refused:
        _keyed(state, "t", [(b"a", b"1"), (None, b"2")], state.clock.now_ms())
    assert refused.value.record_errors == [
        (1, "Compacted topic cannot accept message without key in topic partition t-0")
    ]
    assert log.log_end_offset == 0


def test_compact_delete_both_compacts_and_deletes_old_segments() -> None:
    state, log = _state(**{"cleanup.policy": "compact,delete", "retention.ms": "60000"})
    now = state.clock.now_ms()
    _keyed(state, "t", [(b"a", b"1"), (b"a", b"2"), (b"b", b"1")], now - 120_000)
    state.compact_now("t")
    assert [o for o, _, _ in _visible(log)] == [1, 2, 3]
    state.enforce_retention()
    assert log.log_start_offset == 3, "the old segment is past retention.ms"


def _wall_clock_tests() -> list[Any]:
    """This module's tests that take no fixture (all but this one)."""
    return [
        test
        for name, test in sorted(globals().items())
        if name.startswith("test_") and callable(test) and name != _SELF
        and not inspect.signature(test).parameters
    ]  # fmt: skip


_SELF = "test_no_test_here_reads_the_wall_clock"


@pytest.mark.parametrize("test", _wall_clock_tests(), ids=lambda t: t.__name__)
def test_no_test_here_reads_the_wall_clock(test: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test above holds when a second of wall time passes between any two readings
    of it, as on a machine loaded with other work (item 12 of issue 44 failed so): none
    may depend on how fast the machine runs it."""
    racing_wall_clock(monkeypatch)
    test()
