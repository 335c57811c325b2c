"""A scenario bound to one run: real topic names, its options, seeds and steps with their
actions, resolved once before anything runs; the runner never looks a name up again.

Logical names (``source``, ``sink``) stay in the scenario file; each run gets unique
real names, so runs share a broker without seeing each other's records.
"""

from __future__ import annotations

import functools
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkatest.scenarios.actions import BoundAction, bind_action
from kafkatest.scenarios.context import real_name
from kafkatest.scenarios.spec import Scenario

#: A logical topic name to this run's.
Rename = Callable[[str], str]
#: A point in the source: (real topic, partition) -> offset.
Offsets = dict[tuple[str, int], int]


@dataclass(frozen=True)
class BoundStep:
    """A step's trigger (``before_start`` or ``{kind: argument}``, its topics real) and
    its actions."""

    when: str | dict[str, Any]
    actions: tuple[BoundAction, ...]


@dataclass(frozen=True)
class Plan:
    """What a run does, every name already this run's."""

    scenario: Scenario
    #: logical topic -> real name.
    names: dict[str, str]
    source: str
    sink: str
    #: The job's options, ``{topic}`` replaced by the real name.
    options: dict[str, str]
    #: real topic -> (partitions, configs to create it with).
    topics: dict[str, tuple[int, dict[str, str] | None]]
    #: The seed section, as ``seed`` actions.
    seeds: tuple[BoundAction, ...]
    steps: tuple[BoundStep, ...]
    #: ``expect.until``: where a query that goes on is stopped.
    until: Offsets


def bind(scenario: Scenario) -> Plan:
    """`scenario` for one run: unique real names, and everything that names a topic."""
    names = real_topic_names(scenario)
    rename = functools.partial(real_name, names)
    captured = {spec.topic for spec in scenario.seed if spec.capture is not None}
    return Plan(
        scenario,
        names,
        names[scenario.source],
        names[scenario.sink],
        resolved_options(scenario, names),
        {
            # Captured records keep their (old) timestamps: retention would delete them.
            names[logical]: (count, {"retention.ms": "-1"} if logical in captured else None)
            for logical, count in scenario.topics.items()
        },
        tuple(bind_action({"seed": spec.to_data()}, rename) for spec in scenario.seed),
        tuple(_bind_step(step.when, step.do, scenario.sink, rename) for step in scenario.steps),
        _offsets(scenario.expect.until, rename),
    )


def _bind_step(
    when: str | dict[str, Any], do: list[dict[str, Any]], sink: str, rename: Rename
) -> BoundStep:
    actions = tuple(bind_action(action, rename) for action in do)
    if not isinstance(when, dict) or len(when) != 1:
        return BoundStep(when, actions)
    ((kind, arg),) = when.items()
    if kind == "at_offsets":
        arg = _offsets(arg, rename)
    elif kind == "sink_written_uncommitted":
        options = arg if isinstance(arg, dict) else {}
        arg = {**options, "sink": rename(str(options.get("sink", sink)))}
    return BoundStep({kind: arg}, actions)


def _offsets(given: dict[str, dict[Any, Any]], rename: Rename) -> Offsets:
    return {
        (rename(topic), int(p)): int(o) for topic, parts in given.items() for p, o in parts.items()
    }


def real_topic_names(scenario: Scenario) -> dict[str, str]:
    """Unique topic names for this run, readable in broker logs."""
    slug = re.sub(r"[^A-Za-z0-9-]+", "-", scenario.name)[:40].strip("-") or "scenario"
    run = uuid.uuid4().hex[:6]
    return {logical: f"kt-{slug}-{logical}-{run}" for logical in scenario.topics}


def resolved_options(scenario: Scenario, names: dict[str, str]) -> dict[str, str]:
    """Option values with ``{topic}`` replaced by the real name.

    Real names hold only letters, digits, ``.``, ``_`` and ``-``, so they read the
    same inside a ``subscribePattern`` regex and inside ``endingOffsets`` JSON.
    """
    out = {}
    for key, value in scenario.options.items():
        for logical, real in names.items():
            value = value.replace("{" + logical + "}", real)
        out[key] = value
    return out
