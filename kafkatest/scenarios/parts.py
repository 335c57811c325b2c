"""The two parts of a scenario file that other modules need alone: a seed and a step.

`spec` reads the whole file; the checks (`checks`) and the actions that seed
(`actions`) need only these two, and taking them from here keeps those modules
below `spec` instead of in a circle with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafkatest.limits import MAX_INT, MAX_SEED_RECORDS

#: Where a seed's records come from, one per seed: `count` generated records, or a
#: `capture` file (``kafkatest capture``) replayed as it was read. The file checks, the
#: ``seed`` action's arguments and `SeedSpec` all take these from here.
SEED_SOURCES = {
    "count": "how many records {label, n} to generate",
    "capture": "a capture file (kafkatest capture), relative to the scenario file",
}
#: A seed's other fields: required, then optional.
SEED_REQUIRED = ("label", "topic")
SEED_OPTIONAL = ("partition",)


def seed_problems(data: object) -> list[str]:
    """What is wrong with one seed's fields (empty when it can run): a label, a topic,
    exactly one source, and numbers within their bounds."""
    if not isinstance(data, dict):
        return [f"a seed is a mapping of {', '.join((*SEED_REQUIRED, *SEED_SOURCES))}"]
    missing = [k for k in SEED_REQUIRED if k not in data]
    return (
        ([f"missing field(s) {missing}"] if missing else [])
        + seed_source_problems(data)
        + seed_number_problems(data)
    )


def seed_number_problems(data: dict[str, Any]) -> list[str]:
    """`count` from 0 to `limits.MAX_SEED_RECORDS` and `partition` from 0, whole numbers
    (a count of -5 seeded nothing, 10^12 ran out of memory, partition -1 spread records
    over every partition)."""
    problems = []
    for name, lowest, highest in (("count", 0, MAX_SEED_RECORDS), ("partition", 0, MAX_INT)):
        value = data.get(name)
        if value is None and name not in data:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not lowest <= value <= highest:
            problems.append(f"{name}: a whole number from {lowest} to {highest}, not {value!r}")
    return problems


def seed_source_problems(data: dict[str, Any]) -> list[str]:
    """Exactly one of `SEED_SOURCES`, and no partition for a capture (it keeps its own)."""
    problems = []
    sources = [k for k in SEED_SOURCES if k in data]
    if len(sources) != 1:
        given = f"not {' and '.join(sources)}" if sources else "none given"
        problems.append(
            "give one source: "
            + " or ".join(f"{k} ({meaning})" for k, meaning in SEED_SOURCES.items())
            + f"; {given}"
        )
    if "capture" in data and "partition" in data:
        problems.append("a capture keeps its records' partitions: drop 'partition'")
    return problems


@dataclass
class SeedSpec:
    """`count` records ``{"label", "n"}`` to one partition, identities ``<label>-<n>``; or
    the records of a `capture` file, with their partitions, timestamps, headers and schemas
    (identities ``<partition>:<original offset>``)."""

    label: str
    topic: str
    count: int = 0
    partition: int = 0
    capture: str | None = None

    @classmethod
    def parse(cls, data: dict[str, Any]) -> SeedSpec:
        problems = seed_problems(data)
        if problems:
            raise ValueError(f"seed {data.get('label', '?')!r}: {'; '.join(problems)}")
        capture = data.get("capture")
        return cls(
            str(data["label"]),
            str(data["topic"]),
            int(data.get("count", 0)),
            int(data.get("partition", 0)),
            None if capture is None else str(capture),
        )

    def to_data(self) -> dict[str, Any]:
        """As a file writes it: only the source it has."""
        out: dict[str, Any] = {"label": self.label, "topic": self.topic}
        if self.capture is not None:
            out["capture"] = self.capture
        else:
            out.update(count=self.count, partition=self.partition)
        return out


@dataclass
class Step:
    """When (a trigger) and what (actions, each ``{name: {args}}``)."""

    when: str | dict[str, Any]
    do: list[dict[str, Any]]

    @classmethod
    def parse(cls, data: dict[str, Any]) -> Step:
        actions = [a if isinstance(a, dict) else {str(a): {}} for a in data["do"]]
        return cls(data.get("when", "before_start"), actions)
