"""Checks a scenario passes before anything runs: a file that could not run is refused.

Each problem names its place (``steps[0].do[1]``) and the nearest known name, so
a typo in a scenario file fails when it is loaded, before a broker or Spark
starts, instead of minutes later in the middle of a run. Actions' arguments come
from their declarations (`kafkatest.scenarios.actions.ACTIONS`).
"""

from __future__ import annotations

import difflib
from typing import Any

from kafkatest.errors import KafkaTestError
from kafkatest.limits import MAX_WAIT_S
from kafkatest.scenarios.parts import (
    Step,
    seed_number_problems,
    seed_problems,
    seed_source_problems,
)

#: Triggers a step's ``when`` may name (``before_start`` alone; the others as
#: ``{kind: argument}``), and what each waits for.
TRIGGERS = {
    "before_start": "before the job starts (the default)",
    "after_batch": "batch N (0 or more), or a later one, has finished",
    "after_seconds": f"N seconds (0 to {MAX_WAIT_S}) after the job started",
    "at_offsets": "the job has consumed up to {topic: {partition: offset}}",
    "sink_written_uncommitted": "the sink holds records ({records: N, default 1; sink: "
    "topic}) of a batch not yet committed (mode: process)",
}
OUTCOMES = ("fails", "continues", "finishes")
DELIVERIES = ("at_least_once", "exactly_once", "expected_loss", "none")
#: Top-level fields: required ones, with what they hold, then the optional ones.
REQUIRED_FIELDS = {
    "name": "the scenario's name",
    "job": "the job to run: module:function or path/to/file.py:function",
    "topics": "logical topic names and their partition counts, e.g. {src: 1, sink: 1}",
    "source": "the topic the job reads (one of topics)",
    "sink": "the topic the job writes (one of topics)",
}
OPTIONAL_FIELDS = {
    "mode": "stream (the default: in this process), batch, or process (its own, killable)",
    "options": "the job's options; {topic} in a value is that topic's real name",
    "seed": "records to write before the job starts: a list of seeds (below)",
    "steps": "a list of {when: trigger, do: [actions]}",
    "expect": "what must happen (below)",
    "timeout_s": f"how long the job may run, seconds (default 120, at most {MAX_WAIT_S})",
}
EXPECT_FIELDS = {
    "outcome": f"one of {', '.join(OUTCOMES)} (default finishes)",
    "error": "texts the job's error must name (a KAFKA_DATA_LOSS.<reason> as Spark names it)",
    "until": "outcome continues: {topic: {partition: offset}} the query reads before it stops",
    "delivery": f"one of {', '.join(DELIVERIES)} (default at_least_once)",
    "lost": "expected_loss: exactly the records lost, [{seed, partition, from, to}]",
    "duplicated": "exactly the records duplicated, [{seed, partition, from, to}] ([]: none)",
}


class ScenarioError(KafkaTestError, ValueError):
    """A scenario that cannot run: the message names the field and what it must hold."""


def _suggest(name: str, known: Any) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_fields(data: dict[str, Any]) -> None:
    label = f"scenario {data.get('name', '?')!r}"
    for name, meaning in REQUIRED_FIELDS.items():
        if data.get(name) is None:
            raise ScenarioError(f"{label}: missing field {name!r} ({meaning})")
    known = (*REQUIRED_FIELDS, *OPTIONAL_FIELDS)
    for name in data:
        if name not in known:
            raise ScenarioError(
                f"{label}: unknown field {name!r}{_suggest(str(name), known)}; "
                f"fields: {', '.join(known)}"
            )
    if not isinstance(data["topics"], dict) or not data["topics"]:
        raise ScenarioError(f"{label}: field 'topics' must map topic names to partition counts")
    for name in ("options", "expect"):
        if not isinstance(data.get(name, {}), dict):
            raise ScenarioError(f"{label}: field {name!r} must be a mapping")
    for name in ("seed", "steps"):
        if not isinstance(data.get(name, []), list):
            raise ScenarioError(f"{label}: field {name!r} must be a list")
    for i, step in enumerate(data.get("steps", [])):
        if not isinstance(step, dict) or not isinstance(step.get("do"), list):
            raise ScenarioError(
                f"{label}: steps[{i}] must be a mapping with 'do' (a list of actions) and "
                "optionally 'when' (a trigger)"
            )
        unknown = sorted(set(step) - {"when", "do"})
        if unknown:
            raise ScenarioError(f"{label}: steps[{i}]: unknown field(s) {unknown}; use when, do")
    for i, seed in enumerate(data.get("seed", [])):
        problems = seed_problems(seed)
        if problems:
            raise ScenarioError(f"{label}: seed[{i}]: {'; '.join(problems)}")
    unknown = sorted(set(data.get("expect", {})) - set(EXPECT_FIELDS))
    if unknown:
        raise ScenarioError(
            f"{label}: expect: unknown field(s) {unknown}; fields: {', '.join(EXPECT_FIELDS)}"
        )


def step_problems(where: str, step: Step, topics: dict[str, int]) -> list[str]:
    """What is wrong with one step's trigger and actions (empty when it can run)."""
    problems = _trigger_problems(f"{where}.when", step.when, topics)
    for j, action in enumerate(step.do):
        problems.extend(_action_problems(f"{where}.do[{j}]", action, topics))
    return problems


def _trigger_problems(where: str, when: object, topics: dict[str, int]) -> list[str]:
    if when == "before_start":
        return []
    if not isinstance(when, dict) or len(when) != 1:
        known = ", ".join(TRIGGERS)
        hint = _suggest(when, TRIGGERS) if isinstance(when, str) else ""
        return [f"{where}: unknown trigger {when!r}{hint}; triggers: {known}"]
    ((kind, arg),) = when.items()
    if kind not in TRIGGERS or kind == "before_start":
        return [
            f"{where}: unknown trigger {kind!r}{_suggest(str(kind), TRIGGERS)}; triggers: {', '.join(TRIGGERS)}"
        ]
    if kind == "after_batch" and (isinstance(arg, bool) or not isinstance(arg, int) or arg < 0):
        return [f"{where}.after_batch: a batch id (0 or more), not {arg!r}"]
    if kind == "after_seconds" and not _seconds(arg):
        return [f"{where}.after_seconds: a number of seconds from 0 to {MAX_WAIT_S}, not {arg!r}"]
    if kind == "at_offsets":
        return _offsets_problems(f"{where}.at_offsets", arg, topics)
    if kind == "sink_written_uncommitted" and arg is not None and not isinstance(arg, dict):
        return [
            f"{where}.sink_written_uncommitted: options {{records, sink}} or nothing, not {arg!r}"
        ]
    return []


def _offsets_problems(where: str, arg: object, topics: dict[str, int]) -> list[str]:
    if not isinstance(arg, dict) or not arg:
        return [f"{where}: map topics to {{partition: offset}}, not {arg!r}"]
    problems = []
    for topic, parts in arg.items():
        if topic not in topics:
            problems.append(f"{where}: topic {topic!r} is not listed under topics")
        elif not isinstance(parts, dict) or not all(
            str(p).isdigit() and isinstance(o, int) for p, o in parts.items()
        ):
            problems.append(f"{where}.{topic}: map partitions to offsets, not {parts!r}")
    return problems


def _action_problems(where: str, action: object, topics: dict[str, int]) -> list[str]:
    from kafkatest.faults.registry import ALIASES
    from kafkatest.scenarios.actions import ACTIONS

    if not isinstance(action, dict) or len(action) != 1:
        return [f"{where}: an action is one {{name: {{arguments}}}} mapping, not {action!r}"]
    ((name, args),) = action.items()
    name = ALIASES.get(name, name)  # an old name: `make_action` warns when it runs
    if name not in ACTIONS:
        return [
            f"{where}: unknown action {name!r}{_suggest(str(name), ACTIONS)}; "
            f"actions: {', '.join(sorted(ACTIONS))}"
        ]
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return [f"{where}.{name}: arguments must be a mapping, not {args!r}"]
    required, optional = ACTIONS[name].required, ACTIONS[name].optional
    problems = []
    missing = [p for p in required if p not in args]
    unknown = sorted(set(args) - set(required) - set(optional))
    if missing:
        problems.append(f"{where}.{name}: missing argument(s) {missing}")
    if unknown:
        allowed = ", ".join((*required, *optional)) or "none"
        problems.append(f"{where}.{name}: unknown argument(s) {unknown}; arguments: {allowed}")
    for arg, value in args.items():
        if name == "seed" and arg in ("count", "partition"):
            continue  # seed_number_problems, below
        problem = _argument_problem(arg, value)
        if problem is not None:
            problems.append(f"{where}.{name}.{arg}: {problem}, not {value!r}")
    problem = _range_problem(name, args)
    if problem is not None:
        problems.append(f"{where}.{name}: {problem}")
    if name == "seed":
        problems += [f"{where}.seed: {problem}" for problem in seed_source_problems(args)]
        problems += [f"{where}.seed.{problem}" for problem in seed_number_problems(args)]
    topic = args.get("topic")
    if isinstance(topic, str) and topic not in topics:
        problems.append(f"{where}.{name}: topic {topic!r} is not listed under topics")
    return problems


def _range_problem(action: str, args: dict[str, Any]) -> str | None:
    """A fault argument over its bound (`faults.registry.MAXIMA`, checked again when
    the fault runs), found when the file is loaded."""
    from kafkatest.emulator import InvalidFault
    from kafkatest.faults.registry import all_faults, check_ranges

    if action not in all_faults():
        return None
    try:
        check_ranges(action, args)
    except InvalidFault as exc:
        return str(exc).removeprefix(f"{action}: ")
    return None


def _seconds(value: object) -> bool:
    """A wait a scenario may ask for: 0 to `limits.MAX_WAIT_S` seconds (no NaN)."""
    return (
        not isinstance(value, bool) and isinstance(value, (int, float)) and 0 <= value <= MAX_WAIT_S
    )


def timeout_problem(value: object) -> str | None:
    """Why a scenario's timeout_s cannot be one (a time-out of -1 or NaN never ends)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not 0 < value <= MAX_WAIT_S
    ):
        return f"timeout_s: a number of seconds above 0 and at most {MAX_WAIT_S}, not {value!r}"
    return None


def _whole(value: object, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


#: Arguments several actions share: what each must hold (minimum for numbers).
_WHOLE_ARGUMENTS = {
    "partition": 0,
    "partitions": 1,
    "total": 1,
    "count": 0,
    "to_broker": 0,
    "retention_ms": 1,
    "ms": 0,
    "delay_ms": 0,
}


def _argument_problem(name: str, value: object) -> str | None:
    """Why a known argument's value cannot work (None when it can, or is not known)."""
    if name in _WHOLE_ARGUMENTS and not _whole(value, _WHOLE_ARGUMENTS[name]):
        return f"a whole number of at least {_WHOLE_ARGUMENTS[name]}"
    if name in ("topic", "label") and (not isinstance(value, str) or not value):
        return "a name"
    if name == "seconds" and not _seconds(value):
        return f"a number of seconds from 0 to {MAX_WAIT_S}"
    if name == "before" and not (
        _whole(value, -1)
        or (
            isinstance(value, dict)
            and value
            and all(str(p).isdigit() and _whole(o, -1) for p, o in value.items())
        )
    ):
        return "an offset (-1: up to the high watermark) or {partition: offset}"
    return None
