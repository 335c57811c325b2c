"""A scenario is bound once into a `Plan`: every topic it names, in the job's options,
seeds, actions, triggers and `until`, is this run's real name before anything runs.
Without a broker or Spark."""

from __future__ import annotations

from typing import Any

import pytest

from kafkatest.scenarios import Expectations, Scenario, SeedSpec, Step
from kafkatest.scenarios.actions import ACTIONS, RunContext
from kafkatest.scenarios.plan import bind


def scenario(**changes: Any) -> Scenario:
    fields: dict[str, Any] = {
        "name": "bound once",
        "job": "kafkatest.scenarios.jobs:copy_stream",
        "topics": {"src": 2, "sink": 1},
        "source": "src",
        "sink": "sink",
        "options": {"subscribePattern": "{src}|other"},
        "seed": [SeedSpec("first", "src", 3, partition=1)],
        "steps": [
            Step({"at_offsets": {"src": {1: 2}}}, [{"delete_topic": {"topic": "src"}}]),
            Step({"sink_written_uncommitted": None}, [{"kill_job": {}}]),
        ],
        "mode": "process",
    }
    return Scenario(**{**fields, **changes})


def test_every_topic_of_the_plan_is_the_runs_real_name() -> None:
    plan = bind(scenario())
    src, sink = plan.names["src"], plan.names["sink"]
    assert src != "src" and src.startswith("kt-bound-once-src-")
    assert (plan.source, plan.sink) == (src, sink)
    assert plan.options == {"subscribePattern": f"{src}|other"}
    assert plan.topics == {src: (2, None), sink: (1, None)}
    assert [s.args for s in plan.seeds] == [
        {"label": "first", "topic": src, "count": 3, "partition": 1}
    ]
    first, second = plan.steps
    assert first.when == {"at_offsets": {(src, 1): 2}}
    assert first.actions[0].args == {"topic": src}
    # The log says what the scenario wrote, in its own names.
    assert first.actions[0].text == "delete_topic {'topic': 'src'}"
    assert second.when == {"sink_written_uncommitted": {"sink": sink}}


def test_until_and_a_capture_seed_are_bound_too(tmp_path: Any) -> None:
    capture = tmp_path / "c.jsonl"
    plan = bind(
        scenario(
            seed=[SeedSpec("captured", "src", capture=str(capture))],
            steps=[],
            mode="stream",
            expect=Expectations(outcome="continues", until={"src": {0: 5}}),
        )
    )
    src = plan.names["src"]
    assert plan.until == {(src, 0): 5}
    # Captured records keep their timestamps: their topic is made without retention.
    assert plan.topics[src] == (2, {"retention.ms": "-1"})
    assert plan.seeds[0].args["capture"] == str(capture)


def test_a_topic_the_scenario_does_not_declare_is_refused_when_bound() -> None:
    with pytest.raises(ValueError, match="unknown topic 'elsewhere'"):
        bind(
            scenario(
                steps=[Step("before_start", [{"stop_one_broker": {"leader_of": "elsewhere"}}])]
            )
        )


def test_a_bound_seed_runs_without_writing_the_actions_log() -> None:
    """The seed section is not a step: `ScenarioResult.actions` lists only the steps'."""
    ran: list[dict[str, Any]] = []
    plan = bind(scenario(steps=[]))
    seed = plan.seeds[0]
    original = ACTIONS["seed"]
    ctx = RunContext(broker=None, names=plan.names)  # type: ignore[arg-type]
    try:
        ACTIONS["seed"] = type(original)("seed", lambda c, a: ran.append(a))
        fake = type(seed)(ACTIONS["seed"], seed.args, seed.text)
        fake.run(ctx)
        assert ran == [seed.args] and ctx.log == []
        fake(ctx)  # as a step runs it
        assert ctx.log == [seed.text]
    finally:
        ACTIONS["seed"] = original
