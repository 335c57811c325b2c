"""A partition's leader-epoch history: which epoch began at which offset.

Kafka keeps this per log (its LeaderEpochFileCache) and answers OffsetForLeaderEpoch
from it: clients that see a partition's leader epoch change ask the new leader where
the epoch they last read from ended, to find out whether the log was truncated
under them. Each leader change adds an entry starting at the log end; entries left
without records are replaced, and deleting records moves the first entry's start
to the new log start, as Kafka does.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

#: Kafka's "no epoch" / "no offset" in OffsetForLeaderEpoch answers.
UNDEFINED_EPOCH = -1
UNDEFINED_OFFSET = -1


@dataclass(frozen=True, slots=True)
class EpochStart:
    epoch: int
    start_offset: int


class LeaderEpochCache:
    """Entries in rising epoch and start-offset order; a new topic starts with (0, 0)."""

    def __init__(self) -> None:
        self._entries: list[EpochStart] = [EpochStart(0, 0)]

    @property
    def entries(self) -> list[EpochStart]:
        return list(self._entries)

    @property
    def latest_epoch(self) -> int:
        return self._entries[-1].epoch if self._entries else UNDEFINED_EPOCH

    @property
    def earliest(self) -> EpochStart | None:
        return self._entries[0] if self._entries else None

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that `epoch` begins at `start_offset` (a new leader at its log end).

        Entries that would break the order (an equal or later epoch, or one starting
        at or after `start_offset`: an epoch in which nothing was written) go.
        """
        last = self._entries[-1] if self._entries else None
        if last is not None and last.epoch == epoch and last.start_offset <= start_offset:
            return
        while self._entries and (
            self._entries[-1].epoch >= epoch or self._entries[-1].start_offset >= start_offset
        ):
            self._entries.pop()
        self._entries.append(EpochStart(epoch, start_offset))

    def truncate_from_start(self, log_start: int) -> None:
        """The log now starts at `log_start`: the epoch holding it starts there."""
        removed: EpochStart | None = None
        while self._entries and self._entries[0].start_offset <= log_start:
            removed = self._entries.pop(0)
        if removed is not None:
            self._entries.insert(0, EpochStart(removed.epoch, log_start))

    def end_offset_for(self, epoch: int, log_end: int) -> tuple[int, int]:
        """(epoch, end offset) as OffsetForLeaderEpoch answers for a requested `epoch`.

        The current epoch ends at the log end; an earlier one where the next known
        epoch starts, named by the latest known epoch at or below it (or the
        requested epoch itself when it predates every known one); an unknown later
        epoch has no answer.
        """
        if epoch == UNDEFINED_EPOCH or not self._entries:
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET
        if epoch == self.latest_epoch:
            return epoch, log_end
        epochs = [entry.epoch for entry in self._entries]
        higher = bisect_right(epochs, epoch)
        if higher == len(epochs):
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET
        end = self._entries[higher].start_offset
        return (epoch if higher == 0 else epochs[higher - 1]), end

    def epoch_for_offset(self, offset: int) -> int | None:
        """The epoch in which `offset` was written (None before every known epoch)."""
        found: int | None = None
        for entry in self._entries:
            if entry.start_offset > offset:
                break
            found = entry.epoch
        return found
