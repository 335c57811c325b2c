"""What a scenario run found: what Spark did, when each fault fired, what reached the sink."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafkatest.assertions.report import DeliveryReport
from kafkatest.scenarios.spec import Scenario
from kafkatest.scenarios.triggers import Firing
from kafkatest.spark.errors import (
    DATA_LOSS_CONDITION,
    data_loss_reason,
    data_loss_reasons,
)

ERROR_SHOWN = 1500


@dataclass
class JobRun:
    """How the job ended: finished, failed (with Spark's error), stopped after `until`, ..."""

    status: str  # finished | failed | stopped | killed | timeout
    error_class: str = ""
    error: str = ""
    #: Spark error conditions on the error and its causes (e.g. KAFKA_DATA_LOSS.<reason>).
    conditions: tuple[str, ...] = ()

    def line(self) -> str:
        if self.status != "failed":
            return {
                "finished": "the job finished",
                "stopped": "the query went on and was stopped once it reached `until`",
                "killed": "the job was killed and not restarted",
                "timeout": "the job did not end in time and was stopped",
            }.get(self.status, self.status)
        text = self.error if len(self.error) <= ERROR_SHOWN else self.error[:ERROR_SHOWN] + " ..."
        named = f" [{', '.join(self.conditions)}]" if self.conditions else ""
        if not any(data_loss_reason(c) for c in self.conditions):
            # Spark 3.5 raises no condition: name the data loss its message words, as 4.x would.
            reasons = data_loss_reasons(self.error, self.conditions)
            if reasons:
                named += (
                    " [data loss in Spark 4's terms: "
                    + ", ".join(f"{DATA_LOSS_CONDITION}.{r}" for r in reasons)
                    + "]"
                )
        return f"the job failed with {self.error_class}{named}: {text}"


@dataclass
class ScenarioResult:
    """Everything a scenario run observed, and which expectations did not hold."""

    scenario: Scenario
    backend: str
    topics: dict[str, str]
    run: JobRun
    firings: list[Firing] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    delivery: DeliveryReport | None = None
    problems: list[str] = field(default_factory=list)
    saved_to: str | None = None
    process_groups: list[int] = field(default_factory=list)
    #: The seeded records the job should deliver, and the sink's rows, for further checks.
    expected: list[Any] = field(default_factory=list)
    sink_rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def text(self) -> str:
        lines = [
            f"scenario {self.scenario.name!r} on {self.backend}: "
            + ("expectations held" if self.ok else "EXPECTATIONS FAILED"),
            "topics: " + ", ".join(f"{k}={v}" for k, v in self.topics.items()),
            "faults:",
        ]
        lines += [f"  - {f.line()}" for f in self.firings] or ["  (none fired)"]
        if self.actions:
            lines.append("actions done: " + "; ".join(self.actions))
        lines.append(f"what Spark did: {self.run.line()}")
        if self.delivery is not None:
            lines.append("what reached the sink:")
            lines += [f"  {line}" for line in self.delivery.message().splitlines()]
        if self.problems:
            lines.append("not as expected:")
            lines += [f"  - {p}" for p in self.problems]
        if self.saved_to:
            lines.append(f"reproduce: kafkatest repro {self.saved_to} --backend {self.backend}")
        return "\n".join(lines)
