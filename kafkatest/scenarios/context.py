"""What one scenario run holds while it runs: its broker, its seeds, its job and its log."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from kafkatest.brokers.base import Broker
from kafkatest.checkpoints import RecordedFault
from kafkatest.seeding import SeedResult


class JobControl(Protocol):
    """What actions may do to the job under test."""

    def kill(self) -> None: ...
    def restart(self) -> None: ...
    def stop(self) -> None: ...
    def start(self) -> None: ...


@dataclass
class RunContext:
    """The run's broker, its topics' real names (for binding actions: `plan.bind`),
    seeds so far and the job's handle."""

    broker: Broker
    names: dict[str, str]
    seeds: dict[str, SeedResult] = field(default_factory=dict)
    job: JobControl | None = None
    log: list[str] = field(default_factory=list)
    #: Process groups of job processes started in this run (all killed by its end).
    process_groups: list[int] = field(default_factory=list)
    #: The registry schema actions use (`run_scenario(..., schema_registry=)`).
    schema_registry: Any = None
    #: topic -> the Avro schema its producer writes with now (set by register_schema /
    #: evolve_schema; seeds to that topic are then Avro).
    schemas: dict[str, str] = field(default_factory=dict)
    #: The job's checkpoint directory: the one checkpoint actions damage (a scenario
    #: written in advance cannot know the path, so a file never names it).
    checkpoint: str | None = None
    #: Each checkpoint fault applied, with the checkpoint's logs before and after it, for
    #: the delivery report to explain what the restart did.
    checkpoint_faults: list[RecordedFault] = field(default_factory=list)

    def topic(self, logical: str) -> str:
        """The real name of a topic the scenario names."""
        return real_name(self.names, logical)


def real_name(names: Mapping[str, str], logical: str) -> str:
    """This run's name of the topic a scenario calls `logical`: asked once, when the
    scenario is bound (`plan.bind`), never while it runs."""
    try:
        return names[logical]
    except KeyError:
        raise ValueError(f"unknown topic {logical!r}; declared: {sorted(names)}") from None
