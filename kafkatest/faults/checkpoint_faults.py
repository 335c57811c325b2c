"""Checkpoint faults in the fault vocabulary: a stopped query's checkpoint damaged by name.

A job's correctness lives in its checkpoint as much as in Kafka, so the damage an
incident does to it (`kafkatest.checkpoints`) is a fault like a deleted topic: a
`kafka_faults.damage_checkpoint(...)` call and a scenario action placed between two
runs of a job. It touches no broker, so every backend can do it.

It is refused by the control interface (HTTP and ``kafkatest fault``): a checkpoint is
a path on the job's machine, and a standalone emulator's process may run in a container
or as another user, where that path names another file or none; a control port that
deletes or overwrites any file it is told to would also let anything reaching the port
damage files of the emulator's user. Python, where the job runs, applies it.
"""

from __future__ import annotations

from kafkatest.checkpoints import CHECKPOINT_FAULTS, Damage, apply_checkpoint_fault
from kafkatest.faults.registry import fault

#: Why the control interface refuses it (the HTTP answer and the CLI's message).
LOCAL_ONLY = (
    "a checkpoint is a path on the job's machine, not the emulator's (which may run in a "
    "container or as another user), and a control port does not delete or overwrite "
    "files it is told to; apply it in Python (kafka_faults.damage_checkpoint, "
    "kafkatest.checkpoints.apply_checkpoint_fault) or as a scenario action"
)


class CheckpointFaults:
    """The checkpoint faults `Faults` (api.py) holds and offers as its own methods."""

    def __init__(self, broker: object) -> None:
        #: Asked by `@fault` for what it can do (every backend can damage a checkpoint).
        self.broker = broker

    @fault(
        local_only=LOCAL_ONLY,
        params={
            "checkpoint": "damage_checkpoint: the stopped query's checkpoint directory",
            "fault": "damage_checkpoint: " + ", ".join(CHECKPOINT_FAULTS) + ", or rewind-to-<n>",
        },
    )
    def damage_checkpoint(self, checkpoint: str, fault: str) -> Damage:
        """Damage a stopped query's checkpoint as an incident does; what changed.

        `fault` is a `CHECKPOINT_FAULTS` name or ``rewind-to-<n>``; an unknown one is
        refused with the list before any file is touched. What a restarted query does
        after each is in docs/how-to/checkpoint-faults.md.
        """
        return apply_checkpoint_fault(checkpoint, fault)
