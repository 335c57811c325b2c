"""The offsets topic's records at the state level: what the wire tests cannot reach."""

from __future__ import annotations

import logging

import pytest

from kafkatest.emulator.state.broker_state import EmulatorState
from kafkatest.emulator.state.groups.offsets import CommittedOffset
from kafkatest.emulator.state.internal_topics import OFFSETS_TOPIC, ensure_offsets_topic


def offsets_log_end(state: EmulatorState) -> int:
    return state.topics.get(OFFSETS_TOPIC).partitions[0].log.log_end_offset


def test_nothing_is_written_before_the_offsets_topic_exists() -> None:
    state = EmulatorState()
    state.offsets.commit("g", "t", 0, CommittedOffset(1, -1, "", state.clock.now_ms()))
    assert state.offsets.fetch("g", "t", 0) is not None
    assert OFFSETS_TOPIC not in state.topics


def test_a_record_kafka_could_not_write_is_skipped_and_the_commit_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A group id past Kafka's 32767-byte string limit: the commit stands, no record is
    written, and one short log line says why."""
    state = EmulatorState()
    ensure_offsets_topic(state)
    huge = "g" * 40_000
    with caplog.at_level(logging.WARNING, logger="kafkatest.emulator"):
        state.offsets.commit(huge, "t", 0, CommittedOffset(1, -1, "", state.clock.now_ms()))
    assert state.offsets.fetch(huge, "t", 0) is not None
    assert offsets_log_end(state) == 0
    [line] = caplog.messages
    assert "record not written" in line and len(line) < 300

    state.offsets.commit("g", "t", 0, CommittedOffset(1, -1, "", state.clock.now_ms()))
    assert offsets_log_end(state) == 1
