"""ListOffsets by timestamp over a long log: indexed, not walked (issue 44, item 1).

A log of 20,000 one-record batches truncated near its end by DeleteRecords (the
batches below the log start stay in the active segment, as in Kafka) once made
every lookup decode all 20,000 batches; a ListOffsets naming the partition 1,000
times held every client for three minutes. These tests pin the work a lookup does
(batches decoded), not a time.
"""

from __future__ import annotations

from typing import Any

import pytest
from batch_builder import build_batch
from hypothesis import given, settings, strategies as st

from kafkatest.emulator.protocol.batches import split_batches
from kafkatest.emulator.state import EmulatorState, log as log_module
from kafkatest.emulator.state.time_index import BLOCK, TimeIndex

BATCHES = 20_000


def _brute_first(stamps: list[int], timestamp: int, start: int) -> int | None:
    return next((i for i in range(start, len(stamps)) if stamps[i] >= timestamp), None)


@settings(max_examples=300, deadline=None)
@given(
    stamps=st.lists(st.integers(-1, 50), max_size=4 * BLOCK + 3),
    dropped=st.integers(0, 2 * BLOCK),
    timestamp=st.integers(-2, 52),
    start=st.integers(0, 4 * BLOCK + 5),
)
def test_the_index_finds_what_a_walk_finds(
    stamps: list[int], dropped: int, timestamp: int, start: int
) -> None:
    index = TimeIndex()
    for stamp in stamps:
        index.append(stamp)
    index.drop_front(dropped)
    kept = stamps[dropped:]
    assert index.max_timestamps == kept
    assert index.first_at_or_after(timestamp, start) == _brute_first(kept, timestamp, start)
    largest = index.largest()
    if not kept:
        assert largest is None
    else:
        assert largest == (kept.index(max(kept)), max(kept))
    rebuilt = TimeIndex(kept)
    assert rebuilt.first_at_or_after(timestamp, start) == _brute_first(kept, timestamp, start)


@pytest.fixture(scope="module")
def long_truncated_log() -> Any:
    """20,000 one-record batches, timestamps 1,000 apart; DeleteRecords to 19,995."""
    state = EmulatorState()
    state.create_topic("long")
    topic = state.topics.get("long")
    for n in range(BATCHES):
        [(header, raw)] = split_batches(build_batch([b"x"], timestamps=[1_000_000 + n * 1_000]))
        state.append(topic, 0, header, raw)
    state.delete_records(topic, 0, BATCHES - 5)
    return state.log_of("long", 0)


def _decodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the batches a lookup decodes (their records' timestamps)."""
    decoded: list[int] = []
    original = log_module.record_timestamps

    def counting(header: Any, batch: bytes) -> Any:
        decoded.append(header.base_offset)
        return original(header, batch)

    monkeypatch.setattr(log_module, "record_timestamps", counting)
    return decoded


def test_a_timestamp_before_the_log_start_reads_one_batch(
    long_truncated_log: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded = _decodes(monkeypatch)
    assert long_truncated_log.log_start_offset == BATCHES - 5
    assert long_truncated_log.offset_for_timestamp(0) == (BATCHES - 5, 1_000_000 + 19_995_000)
    assert decoded == [BATCHES - 5]


def test_a_timestamp_inside_the_kept_records_reads_one_batch(
    long_truncated_log: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded = _decodes(monkeypatch)
    wanted = 1_000_000 + 19_997_000 - 1
    assert long_truncated_log.offset_for_timestamp(wanted) == (19_997, wanted + 1)
    assert long_truncated_log.offset_for_timestamp(10**15) is None
    assert decoded == [19_997]


def test_the_largest_timestamp_is_found_without_a_walk(
    long_truncated_log: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded = _decodes(monkeypatch)
    assert long_truncated_log.max_timestamp() == (BATCHES - 1, 1_000_000 + 19_999_000)
    assert decoded == [BATCHES - 1]


def test_skipped_earlier_batches_with_late_timestamps_are_passed_by_block() -> None:
    """The first batch holds the latest timestamp, every later one an early one: a
    lookup from the log start may not stop at the first batch (below the start)."""
    state = EmulatorState()
    state.create_topic("t")
    topic = state.topics.get("t")
    stamps = [10**12] + [1_000 + n for n in range(5 * BLOCK)] + [10**12 + 5]
    for stamp in stamps:
        [(header, raw)] = split_batches(build_batch([b"x"], timestamps=[stamp]))
        state.append(topic, 0, header, raw)
    state.delete_records(topic, 0, 1)
    log = state.log_of("t", 0)
    assert log.offset_for_timestamp(10**12) == (len(stamps) - 1, 10**12 + 5)
    assert log.offset_for_timestamp(1_000 + 3 * BLOCK) == (1 + 3 * BLOCK, 1_000 + 3 * BLOCK)
