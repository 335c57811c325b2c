"""A scenario as data: what to seed, which job, which faults when, what must happen.

The same `Scenario` drives a pytest test and ``kafkatest repro FILE``: a failing
test saves it as YAML, and anyone can run that file against a fresh broker to
see the same faults hit the same job at the same points. Topic names in a file
are logical (``src``); each run gives them unique real names, and option values
may refer to them as ``{src}`` (in ``subscribePattern``, ``endingOffsets``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kafkatest._ground import bounded_json, bounded_yaml
from kafkatest.limits import MAX_PARTITIONS, MAX_SCENARIO_BYTES
from kafkatest.scenarios.checks import (
    DELIVERIES,
    OUTCOMES,
    ScenarioError,
    check_fields,
    step_problems,
    timeout_problem,
)
from kafkatest.scenarios.parts import SeedSpec, Step

MODES = ("stream", "batch", "process")


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
            if not 1 <= count <= MAX_PARTITIONS:
                problems.append(
                    f"topics.{logical}: a topic has 1 to {MAX_PARTITIONS} partitions, not {count}"
                )
        for i, spec in enumerate(self.seed):
            partitions = self.topics.get(spec.topic, 1)
            if spec.capture is None and 1 <= partitions <= spec.partition:
                problems.append(
                    f"seed[{i}].partition: topic {spec.topic!r} has partitions "
                    f"0..{partitions - 1}, not {spec.partition}"
                )
        timeout = timeout_problem(self.timeout_s)
        if timeout is not None:
            problems.append(timeout)
        for i, step in enumerate(self.steps):
            problems.extend(step_problems(f"steps[{i}]", step, self.topics))
        if problems:
            raise ScenarioError(f"scenario {self.name!r}: " + "; ".join(problems))

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Scenario:
        """Build from a file's mapping; a missing, unknown or mistyped field is named."""
        check_fields(data)
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
            timeout_s=_number(data.get("timeout_s", 120.0)),
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
            "seed": [s.to_data() for s in self.seed],
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
    """Read a scenario file (YAML or JSON), refusing one that could not run: over
    `limits.MAX_SCENARIO_BYTES`, nested too deeply, or with a YAML alias (a 600-byte
    alias bomb took 75 s and 2.5 GB)."""
    size = Path(path).stat().st_size
    if size > MAX_SCENARIO_BYTES:
        raise ScenarioError(f"{path}: {size} bytes is over the limit of {MAX_SCENARIO_BYTES}")
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = bounded_json.loads(text) if str(path).endswith(".json") else bounded_yaml.load(text)
    except ValueError as exc:  # JsonRefused, YamlRefused
        raise ScenarioError(f"{path}: not a valid scenario file: {exc}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario file holds one mapping")
    try:
        scenario = Scenario.from_data(data)
    except ScenarioError as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    return with_captures_found(scenario, Path(path).parent)


def with_captures_found(scenario: Scenario, folder: Path) -> Scenario:
    """`scenario` with each capture seed's path taken relative to `folder` (the scenario
    file's, so a file and its capture move together); a missing file is refused now,
    before a broker or Spark starts."""
    missing = []
    for i, spec in enumerate(scenario.seed):
        if spec.capture is None:
            continue
        found = folder / spec.capture
        if not found.is_file():
            missing.append(f"seed[{i}].capture: no file {found}")
        spec.capture = str(found)
    if missing:
        raise ScenarioError(f"scenario {scenario.name!r}: " + "; ".join(missing))
    return scenario


def _number(value: Any) -> float:
    """A number as the file gives it (a string such as "NaN" is refused by the checks,
    not turned into one)."""
    return (
        float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    )
