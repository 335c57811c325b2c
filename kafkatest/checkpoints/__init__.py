"""Faults in a streaming query's checkpoint, applied while the query is stopped.

A job's correctness lives in its checkpoint as much as in Kafka: a lost metadata file
gives the query a new id, an offsets log ahead of its commit log replays a batch, a
checkpoint restored from a backup replays every batch since. These functions damage a
stopped query's checkpoint the way those incidents do, so a test can restart the job
and assert what Spark and the sink did (docs/how-to/checkpoint-faults.md)::

    from kafkatest.checkpoints import apply_checkpoint_fault
    apply_checkpoint_fault(checkpoint, "delete-metadata")
"""

from kafkatest.checkpoints.catalog import CHECKPOINT_FAULTS, CheckpointFault, apply_checkpoint_fault
from kafkatest.checkpoints.damage import HOWS, Damage, damage_checkpoint
from kafkatest.checkpoints.explain import (
    BatchOutcome,
    LogSnapshot,
    RecordedFault,
    RestartExplanation,
    explain_restart,
    record_checkpoint_fault,
)
from kafkatest.checkpoints.layout import TARGETS, CheckpointFaultError
from kafkatest.checkpoints.report import BatchRun, ReplayReport, delivered_offsets, replay_report
from kafkatest.checkpoints.rewind import (
    crash_before_commit,
    restore_checkpoint,
    rewind_checkpoint,
    snapshot_checkpoint,
)

__all__ = [
    "CHECKPOINT_FAULTS",
    "HOWS",
    "TARGETS",
    "BatchOutcome",
    "BatchRun",
    "CheckpointFault",
    "CheckpointFaultError",
    "Damage",
    "LogSnapshot",
    "RecordedFault",
    "ReplayReport",
    "RestartExplanation",
    "apply_checkpoint_fault",
    "crash_before_commit",
    "damage_checkpoint",
    "delivered_offsets",
    "explain_restart",
    "record_checkpoint_fault",
    "replay_report",
    "restore_checkpoint",
    "rewind_checkpoint",
    "snapshot_checkpoint",
]
