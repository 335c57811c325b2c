"""Recent FindCoordinator lookups per group id: consumers on their way to a new group.

A new group's join window (group_rebalance) waits for consumers started together. The
first sign of one is its coordinator lookup, not its JoinGroup: librdkafka (2.10 and
later) drops its bootstrap connection once Metadata names the brokers, which loses the
FindCoordinator sent on it, and it asks again only after its connection suppression
(reconnect.backoff.ms / 2, 50 ms by default). So four consumers look the coordinator up
within a few milliseconds, then join some 50 ms later; one whose answer beat the
Metadata joins at once. Measuring the window from the first lookup lets that early
member's window cover the others, and lets the window close soon after the last of
them joins rather than a fixed time after the first (measured in BENCHMARKS.md).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

#: Lookups of one group further apart than this belong to different bursts: a lookup
#: long before a join says nothing about who else is coming.
BURST_GAP_MS = 1_000


@dataclass
class LookupBurst:
    """Lookups of one group id, each within BURST_GAP_MS of the one before."""

    first_ms: int
    last_ms: int


class RecentLookups:
    """The latest burst of lookups per group id, kept only while it is recent.

    Group ids are the client's choice, so entries are forgotten BURST_GAP_MS after
    their last lookup: memory follows the lookup rate, not the count of ids ever used.
    """

    def __init__(self) -> None:
        #: Oldest last lookup first, so expired entries are popped from the front.
        self._bursts: OrderedDict[str, LookupBurst] = OrderedDict()

    def note(self, group_id: str, now_ms: int) -> None:
        self._forget_before(now_ms - BURST_GAP_MS)
        burst = self._bursts.pop(group_id, None) or LookupBurst(now_ms, now_ms)
        burst.last_ms = now_ms
        self._bursts[group_id] = burst

    def burst(self, group_id: str, now_ms: int) -> LookupBurst | None:
        """The group's burst, if its latest lookup is recent."""
        burst = self._bursts.get(group_id)
        if burst is None or burst.last_ms < now_ms - BURST_GAP_MS:
            return None
        return burst

    def __len__(self) -> int:
        return len(self._bursts)

    def _forget_before(self, oldest_ms: int) -> None:
        while self._bursts:
            group_id, burst = next(iter(self._bursts.items()))
            if burst.last_ms >= oldest_ms:
                return
            del self._bursts[group_id]
