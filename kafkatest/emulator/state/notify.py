"""Wake long-polling fetches when something they wait for happens.

A Fetch with min_bytes waits until enough data is appended or max_wait passes;
appends signal here instead of fetches polling the logs. The server layer adds
signals of its own (a client that sent its next request, see
`server/inbox.py`): a waiter is woken by the first of the signals it waits on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable


class Signal:
    """Lets coroutines wait for the next occurrence of something."""

    def __init__(self) -> None:
        self._waiters: set[asyncio.Future[None]] = set()

    def notify(self) -> None:
        waiters, self._waiters = self._waiters, set()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def add(self, waiter: asyncio.Future[None]) -> None:
        self._waiters.add(waiter)

    def discard(self, waiter: asyncio.Future[None]) -> None:
        self._waiters.discard(waiter)

    async def wait(self, timeout_s: float) -> bool:
        """Wait for the next notify; False if `timeout_s` passed first."""
        return await wait_any((self,), timeout_s)


#: Appends anywhere in the cluster (long-polling fetches wait on it).
AppendSignal = Signal


async def wait_any(signals: Iterable[Signal], timeout_s: float) -> bool:
    """Wait for the first notify of any of `signals`; False if `timeout_s` passed first."""
    if timeout_s <= 0:
        return False
    waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    watched = tuple(signals)
    for signal in watched:
        signal.add(waiter)
    try:
        await asyncio.wait_for(waiter, timeout_s)
        return True
    except asyncio.TimeoutError:
        return False
    finally:
        for signal in watched:
            signal.discard(waiter)
