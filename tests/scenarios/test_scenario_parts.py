"""Triggers, checkpoint reading and scenario files, without Spark or a broker."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kafkatest.scenarios import (
    AfterBatch,
    AfterDelay,
    AtOffsets,
    BatchEvent,
    CheckpointFeed,
    Expectations,
    RecordSet,
    Scenario,
    SeedSpec,
    Step,
    TriggerWatch,
    WhenTrue,
    load_scenario,
    uncommitted_batch,
)
from kafkatest.scenarios.triggers import progress_event


def event(batch_id: int, offset: int, committed: bool = True) -> BatchEvent:
    return BatchEvent(batch_id, {("src", 0): offset}, committed)


def test_after_batch_fires_once_and_records_where() -> None:
    calls: list[int] = []
    trigger = AfterBatch([lambda: calls.append(1)], batch_id=1)
    started = time.monotonic()
    assert not trigger.maybe_fire(None, started)
    assert not trigger.maybe_fire(event(0, 5), started)
    assert trigger.maybe_fire(event(1, 9), started)
    assert not trigger.maybe_fire(event(2, 12), started)
    assert calls == [1]
    assert trigger.firing is not None
    assert (trigger.firing.batch_id, trigger.firing.offsets) == (1, {("src", 0): 9})
    assert "after batch 1 at src[0]=9" in trigger.firing.line()


def test_when_true_fires_at_the_event_its_condition_saw() -> None:
    """Not at the last finished batch: at the uncommitted batch the condition found."""
    calls: list[int] = []
    seen: list[BatchEvent | None] = [None, event(3, 7, committed=False)]
    trigger = WhenTrue([lambda: calls.append(1)], condition=lambda: seen.pop(0))
    started = time.monotonic()
    assert not trigger.maybe_fire(event(2, 5), started)
    assert trigger.maybe_fire(event(2, 5), started)
    assert not trigger.maybe_fire(event(2, 5), started)
    assert calls == [1]
    assert trigger.firing is not None
    assert (trigger.firing.batch_id, trigger.firing.offsets) == (3, {("src", 0): 7})


def test_at_offsets_waits_for_every_partition_of_a_committed_batch() -> None:
    trigger = AtOffsets(offsets={("src", 0): 10, ("src", 1): 4})
    assert not trigger.due(BatchEvent(0, {("src", 0): 12}), 0.0)
    assert not trigger.due(BatchEvent(0, {("src", 0): 12, ("src", 1): 4}, committed=False), 0.0)
    assert trigger.due(BatchEvent(1, {("src", 0): 12, ("src", 1): 4}), 0.0)


def test_after_delay_counts_from_the_start_of_the_run() -> None:
    trigger = AfterDelay(seconds=2.0)
    assert not trigger.due(None, 1.9)
    assert trigger.due(None, 2.0)


def test_watch_reports_an_action_that_failed() -> None:
    def broken() -> None:
        raise RuntimeError("no such topic")

    watch = TriggerWatch([AfterBatch([broken], batch_id=0)], lambda: event(0, 1)).start()
    watch.settled()
    watch.stop()
    assert isinstance(watch.error, RuntimeError)


def test_progress_json_becomes_a_batch_event() -> None:
    progress = {
        "batchId": 3,
        "sources": [{"endOffset": '{"src":{"0":7,"1":2}}'}, {"endOffset": None}],
    }
    assert progress_event(progress).end_offsets == {("src", 0): 7, ("src", 1): 2}


def write_batch(checkpoint: Path, batch_id: int, offsets: str, committed: bool) -> None:
    (checkpoint / "offsets").mkdir(parents=True, exist_ok=True)
    (checkpoint / "commits").mkdir(parents=True, exist_ok=True)
    (checkpoint / "offsets" / str(batch_id)).write_text(
        f'v1\n{{"batchWatermarkMs":0}}\n{offsets}\n'
    )
    if committed:
        (checkpoint / "commits" / str(batch_id)).write_text('v1\n{"nextBatchWatermarkMs":0}\n')


def test_checkpoint_shows_the_batch_between_write_and_commit(tmp_path: Path) -> None:
    write_batch(tmp_path, 0, '{"src":{"0":5}}', committed=True)
    write_batch(tmp_path, 1, '{"src":{"0":9}}', committed=False)
    feed = CheckpointFeed(str(tmp_path))
    assert uncommitted_batch(tmp_path) == 1
    latest = feed.latest()
    assert latest is not None and (latest.batch_id, latest.end_offsets) == (0, {("src", 0): 5})
    planned = feed.planned()
    assert planned is not None and (planned.batch_id, planned.committed) == (1, False)
    assert planned.end_offsets == {("src", 0): 9}


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_scenario_file_round_trip(tmp_path: Path, suffix: str) -> None:
    scenario = Scenario(
        name="round-trip",
        job="kafkatest.scenarios.jobs:copy_stream",
        topics={"src": 2, "sink": 1},
        source="src",
        sink="sink",
        options={"subscribePattern": "^{src}$"},
        seed=[SeedSpec("first", "src", 3, partition=1)],
        steps=[
            Step(
                {"at_offsets": {"src": {1: 3}}},
                [{"delete_records": {"topic": "src", "before": {1: 2}}}],
            )
        ],
        expect=Expectations(
            outcome="continues",
            until={"src": {1: 3}},
            delivery="expected_loss",
            lost=[RecordSet("first", partition=1, start=0, end=2)],
        ),
    )
    loaded = load_scenario(scenario.save(tmp_path / f"s{suffix}"))
    # JSON keys are strings; the runner reads partitions as ints either way.
    assert json.loads(json.dumps(loaded.to_data())) == json.loads(json.dumps(scenario.to_data()))


def test_a_scenario_naming_an_undeclared_topic_is_refused() -> None:
    with pytest.raises(ValueError, match="topic 'other' is used but not listed"):
        Scenario(
            "bad", "m:f", {"src": 1, "sink": 1}, "src", "sink", seed=[SeedSpec("x", "other", 1)]
        )
