"""Fault scenarios for Spark jobs: triggers, crashing the job, and reproducible runs.

A scenario seeds topics, runs a job (in this process or in its own, killable
one), fires faults at chosen points of its run, and reports what Spark did and
what reached the sink; ``kafkatest repro FILE`` runs a saved scenario.
"""

from kafkatest.checkpoints.logs import planned_offsets, uncommitted_batch
from kafkatest.jobs import JobOutcome, JobProcess, kill_all_jobs
from kafkatest.scenarios.result import JobRun, ScenarioResult
from kafkatest.scenarios.runner import run_scenario
from kafkatest.scenarios.spec import (
    Expectations,
    RecordSet,
    Scenario,
    SeedSpec,
    Step,
    load_scenario,
)
from kafkatest.scenarios.triggers import (
    AfterBatch,
    AfterDelay,
    AtOffsets,
    BatchEvent,
    BeforeStart,
    CheckpointFeed,
    Firing,
    ProgressFeed,
    Trigger,
    TriggerWatch,
    WhenTrue,
)

__all__ = [
    "AfterBatch",
    "AfterDelay",
    "AtOffsets",
    "BatchEvent",
    "BeforeStart",
    "CheckpointFeed",
    "Expectations",
    "Firing",
    "JobOutcome",
    "JobProcess",
    "JobRun",
    "ProgressFeed",
    "RecordSet",
    "Scenario",
    "ScenarioResult",
    "SeedSpec",
    "Step",
    "Trigger",
    "TriggerWatch",
    "WhenTrue",
    "kill_all_jobs",
    "load_scenario",
    "planned_offsets",
    "run_scenario",
    "uncommitted_batch",
]
