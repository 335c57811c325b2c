"""Checkpoint faults by name: one declaration each, for scenario files, the fault
vocabulary and reports (``delete-metadata``, ``truncate-offsets``, ``rewind-to-2``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from kafkatest.checkpoints.damage import HOWS, Damage, damage_checkpoint
from kafkatest.checkpoints.layout import TARGETS, CheckpointFaultError
from kafkatest.checkpoints.rewind import crash_before_commit, rewind_checkpoint

_PARTS = {
    "offsets": "the latest offsets/N (batch N's planned end offsets)",
    "commits": "the latest commits/N (batch N's commit)",
    "metadata": "the metadata file (the query id)",
    "sources": "sources/0/0 (the first source's initial offsets)",
    "state-delta": "the newest state store .delta file",
    "state-snapshot": "the newest state store snapshot (.snapshot, or RocksDB's .zip)",
}
_HOWS = {"delete": "Delete", "truncate": "Truncate to half", "garbage": "Overwrite with garbage"}


@dataclass(frozen=True)
class CheckpointFault:
    """A named fault on a stopped query's checkpoint."""

    name: str
    description: str
    apply: Callable[[str | os.PathLike[str]], Damage]


def _damage(target: str, how: str) -> Callable[[str | os.PathLike[str]], Damage]:
    return lambda checkpoint: damage_checkpoint(checkpoint, target, how)


CHECKPOINT_FAULTS: dict[str, CheckpointFault] = {
    f"{how}-{target}": CheckpointFault(
        f"{how}-{target}", f"{_HOWS[how]} {_PARTS[target]}", _damage(target, how)
    )
    for target in TARGETS
    for how in HOWS
}
CHECKPOINT_FAULTS["crash-before-commit"] = CheckpointFault(
    "crash-before-commit",
    "Remove the latest commits/N: the offsets log one batch ahead of the commit log",
    crash_before_commit,
)
REWIND = "rewind-to-"


def apply_checkpoint_fault(checkpoint: str | os.PathLike[str], name: str) -> Damage:
    """Apply the fault called `name` (see `CHECKPOINT_FAULTS`, or ``rewind-to-<n>``)."""
    if name.startswith(REWIND) and name[len(REWIND) :].isdigit():
        return rewind_checkpoint(checkpoint, int(name[len(REWIND) :]))
    fault = CHECKPOINT_FAULTS.get(name)
    if fault is None:
        raise CheckpointFaultError(
            f"unknown checkpoint fault {name!r}: one of {', '.join(CHECKPOINT_FAULTS)}, "
            f"or {REWIND}<n>"
        )
    return fault.apply(checkpoint)
