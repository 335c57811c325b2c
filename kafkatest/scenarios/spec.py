"""A scenario as data: what to seed, which job, which faults when, what must happen.

The same `Scenario` drives a pytest test and ``kafkatest repro FILE``: a failing
test saves it as YAML, and anyone can run that file against a fresh broker to
see the same faults hit the same job at the same points. Topic names in a file
are logical (``src``); each run gives them unique real names, and option values
may refer to them as ``{src}`` (in ``subscribePattern``, ``endingOffsets``).
"""

from __future__ import annotations

import difflib
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kafkatest.errors import KafkaTestError

MODES = ("stream", "batch", "process")
#: Trigger kinds a step's ``when`` may name (besides the string ``before_start``).
TRIGGERS = (
    "before_start",
    "after_batch",
    "after_seconds",
    "at_offsets",
    "sink_written_uncommitted",
)
#: Top-level fields: required ones, with what they hold, then the optional ones.
REQUIRED_FIELDS = {
    "name": "the scenario's name",
    "job": "the job to run: module:function or path/to/file.py:function",
    "topics": "logical topic names and their partition counts, e.g. {src: 1, sink: 1}",
    "source": "the topic the job reads (one of topics)",
    "sink": "the topic the job writes (one of topics)",
}
OPTIONAL_FIELDS = ("mode", "options", "seed", "steps", "expect", "timeout_s")
EXPECT_FIELDS = ("outcome", "error", "until", "delivery", "lost", "duplicated")


class ScenarioError(KafkaTestError, ValueError):
    """A scenario that cannot run: the message names the field and what it must hold."""


OUTCOMES = ("fails", "continues", "finishes")
DELIVERIES = ("at_least_once", "exactly_once", "expected_loss", "none")


@dataclass
class SeedSpec:
    """`count` records ``{"label", "n"}`` to one partition, identities ``<label>-<n>``."""

    label: str
    topic: str
    count: int
    partition: int = 0

    @classmethod
    def parse(cls, data: dict[str, Any]) -> SeedSpec:
        return cls(
            str(data["label"]),
            str(data["topic"]),
            int(data["count"]),
            int(data.get("partition", 0)),
        )


@dataclass
class Step:
    """When (a trigger) and what (actions, each ``{name: {args}}``)."""

    when: str | dict[str, Any]
    do: list[dict[str, Any]]

    @classmethod
    def parse(cls, data: dict[str, Any]) -> Step:
        actions = [a if isinstance(a, dict) else {str(a): {}} for a in data["do"]]
        return cls(data.get("when", "before_start"), actions)


@dataclass
class RecordSet:
    """Seeded records named by seed label, partition and offset range (end exclusive)."""

    seed: str
    partition: int | None = None
    start: int | None = None
    end: int | None = None

    @classmethod
    def parse(cls, data: dict[str, Any]) -> RecordSet:
        def opt(key: str) -> int | None:
            return None if data.get(key) is None else int(data[key])

        return cls(str(data["seed"]), opt("partition"), opt("from"), opt("to"))

    def to_data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seed": self.seed}
        for key, value in (("partition", self.partition), ("from", self.start), ("to", self.end)):
            if value is not None:
                out[key] = value
        return out


@dataclass
class Expectations:
    """What Spark must do (fail with an error naming these texts, go on, finish) and deliver."""

    outcome: str = "finishes"
    error: list[str] = field(default_factory=list)
    until: dict[str, dict[int, int]] = field(default_factory=dict)
    delivery: str = "at_least_once"
    lost: list[RecordSet] = field(default_factory=list)
    duplicated: list[RecordSet] | None = None

    @classmethod
    def parse(cls, data: dict[str, Any]) -> Expectations:
        error = data.get("error", [])
        duplicated = data.get("duplicated")
        return cls(
            outcome=str(data.get("outcome", "finishes")),
            error=[error] if isinstance(error, str) else list(error),
            until={
                t: {int(p): int(o) for p, o in parts.items()}
                for t, parts in data.get("until", {}).items()
            },
            delivery=str(data.get("delivery", "at_least_once")),
            lost=[RecordSet.parse(x) for x in data.get("lost", [])],
            duplicated=None if duplicated is None else [RecordSet.parse(x) for x in duplicated],
        )

    def to_data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"outcome": self.outcome, "delivery": self.delivery}
        if self.error:
            out["error"] = list(self.error)
        if self.until:
            out["until"] = {t: dict(parts) for t, parts in self.until.items()}
        if self.lost:
            out["lost"] = [r.to_data() for r in self.lost]
        if self.duplicated is not None:
            out["duplicated"] = [r.to_data() for r in self.duplicated]
        return out


@dataclass
class Scenario:
    """Everything needed to replay a fault scenario against a fresh broker."""

    name: str
    job: str
    topics: dict[str, int]
    source: str
    sink: str
    mode: str = "stream"
    options: dict[str, str] = field(default_factory=dict)
    seed: list[SeedSpec] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    expect: Expectations = field(default_factory=Expectations)
    timeout_s: float = 120.0

    def __post_init__(self) -> None:
        problems = []
        module, _, function = self.job.rpartition(":")
        if not module or not function:
            problems.append(
                f"job must be module:function or path/to/file.py:function, not {self.job!r}"
            )
        if self.mode not in MODES:
            problems.append(f"mode must be one of {MODES}, not {self.mode!r}")
        if self.expect.outcome not in OUTCOMES:
            problems.append(f"expect.outcome must be one of {OUTCOMES}")
        if self.expect.delivery not in DELIVERIES:
            problems.append(f"expect.delivery must be one of {DELIVERIES}")
        for name in (self.source, self.sink, *(s.topic for s in self.seed)):
            if name not in self.topics:
                problems.append(f"topic {name!r} is used but not listed under topics")
        for logical, count in self.topics.items():
            if count < 1:
                problems.append(
                    f"topics.{logical}: a topic needs at least 1 partition, not {count}"
                )
        for i, step in enumerate(self.steps):
            problems.extend(step_problems(f"steps[{i}]", step, self.topics))
        if problems:
            raise ScenarioError(f"scenario {self.name!r}: " + "; ".join(problems))

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Scenario:
        """Build from a file's mapping; a missing, unknown or mistyped field is named."""
        _check_fields(data)
        try:
            return cls._parse(data)
        except ScenarioError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            name = data.get("name", "?")
            raise ScenarioError(
                f"scenario {name!r}: a field has the wrong shape: {exc!r}"
            ) from None

    @classmethod
    def _parse(cls, data: dict[str, Any]) -> Scenario:
        return cls(
            name=str(data["name"]),
            job=str(data["job"]),
            topics={str(k): int(v) for k, v in data["topics"].items()},
            source=str(data["source"]),
            sink=str(data["sink"]),
            mode=str(data.get("mode", "stream")),
            options={str(k): str(v) for k, v in data.get("options", {}).items()},
            seed=[SeedSpec.parse(s) for s in data.get("seed", [])],
            steps=[Step.parse(s) for s in data.get("steps", [])],
            expect=Expectations.parse(data.get("expect", {})),
            timeout_s=float(data.get("timeout_s", 120.0)),
        )

    def to_data(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "job": self.job,
            "mode": self.mode,
            "topics": dict(self.topics),
            "source": self.source,
            "sink": self.sink,
            "options": dict(self.options),
            "seed": [asdict(s) for s in self.seed],
            "steps": [{"when": s.when, "do": s.do} for s in self.steps],
            "expect": self.expect.to_data(),
            "timeout_s": self.timeout_s,
        }

    def save(self, path: str | Path) -> Path:
        """Write the scenario as YAML (``.json`` paths get JSON)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        data = self.to_data()
        text = (
            json.dumps(data, indent=2)
            if target.suffix == ".json"
            else yaml.safe_dump(data, sort_keys=False)
        )
        target.write_text(text, encoding="utf-8")
        return target


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario file (YAML or JSON), refusing one that could not run."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise ScenarioError(f"{path}: not a valid scenario file: {exc}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario file holds one mapping")
    try:
        return Scenario.from_data(data)
    except ScenarioError as exc:
        raise ScenarioError(f"{path}: {exc}") from None


# -- checks (before anything runs) ------------------------------------------------------


def _suggest(name: str, known: Any) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_fields(data: dict[str, Any]) -> None:
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
        missing = [
            k for k in ("label", "topic", "count") if not isinstance(seed, dict) or k not in seed
        ]
        if missing:
            raise ScenarioError(f"{label}: seed[{i}]: missing field(s) {missing}")
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
    if kind == "after_seconds" and (
        isinstance(arg, bool) or not isinstance(arg, (int, float)) or not 0 <= arg < math.inf
    ):
        return [f"{where}.after_seconds: a number of seconds (0 or more), not {arg!r}"]
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
    from kafkatest.scenarios.actions import ACTION_PARAMS, ACTIONS

    if not isinstance(action, dict) or len(action) != 1:
        return [f"{where}: an action is one {{name: {{arguments}}}} mapping, not {action!r}"]
    ((name, args),) = action.items()
    if name not in ACTIONS:
        return [
            f"{where}: unknown action {name!r}{_suggest(str(name), ACTIONS)}; "
            f"actions: {', '.join(sorted(ACTIONS))}"
        ]
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return [f"{where}.{name}: arguments must be a mapping, not {args!r}"]
    params = ACTION_PARAMS.get(name)
    problems = []
    if params is not None:
        required, optional = params
        missing = [p for p in required if p not in args]
        unknown = sorted(set(args) - set(required) - set(optional))
        if missing:
            problems.append(f"{where}.{name}: missing argument(s) {missing}")
        if unknown:
            allowed = ", ".join((*required, *optional)) or "none"
            problems.append(f"{where}.{name}: unknown argument(s) {unknown}; arguments: {allowed}")
    topic = args.get("topic")
    if topic is not None and topic not in topics:
        problems.append(f"{where}.{name}: topic {topic!r} is not listed under topics")
    return problems
