"""Where a request's time goes inside the emulator, to find stalls.

When a client waits on the emulator, the time is spent in one of four places:
the request sits in the emulator's buffer behind earlier ones on its connection
(`queued`), the handler runs (`handled`), the reply waits for the socket
(`written`), or the emulator has answered and waits for the client's next request
(`idle`, the client's own time). Opt-in (`kafkatest emulator --timings`, or
`EmulatorBroker.record_timings()`): off, the request loop takes no clock readings.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

PHASES = ("queued", "handled", "written", "idle")


@dataclass
class ApiTimings:
    """Seconds spent per phase by every request of one API key."""

    requests: int = 0
    totals: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    longest: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))

    def add(self, phase: str, seconds: float) -> None:
        self.totals[phase] += seconds
        self.longest[phase] = max(self.longest[phase], seconds)


class RequestTimings:
    """Per API key: how long requests were queued, handled, written, and how long the
    connection then sat idle until the client's next request arrived."""

    def __init__(self) -> None:
        self.by_api: dict[int, ApiTimings] = defaultdict(ApiTimings)

    def record(
        self,
        api_key: int,
        arrived: float,
        started: float,
        handled: float,
        written: float,
        idle_before: float,
    ) -> None:
        entry = self.by_api[api_key]
        entry.requests += 1
        entry.add("queued", started - arrived)
        entry.add("handled", handled - started)
        entry.add("written", written - handled)
        entry.add("idle", idle_before)

    def summary(self) -> list[str]:
        """One line per API key, busiest first: total and longest seconds per phase."""
        lines = ["api_key requests " + " ".join(f"{p}_total_s {p}_max_ms" for p in PHASES)]
        ranked = sorted(
            self.by_api.items(),
            key=lambda item: -(item[1].totals["handled"] + item[1].totals["written"]),
        )
        for api_key, entry in ranked:
            phases = " ".join(
                f"{entry.totals[p]:.3f} {entry.longest[p] * 1000:.1f}" for p in PHASES
            )
            lines.append(f"{api_key} {entry.requests} {phases}")
        return lines
