"""The two parts of a scenario file that other modules need alone: a seed and a step.

`spec` reads the whole file; the checks (`checks`) and the actions that seed
(`actions`) need only these two, and taking them from here keeps those modules
below `spec` instead of in a circle with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
