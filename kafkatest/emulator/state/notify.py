"""Wake long-polling fetches when data arrives.

A Fetch with min_bytes waits until enough data is appended or max_wait passes;
appends signal here instead of fetches polling the logs.
"""

from __future__ import annotations

import asyncio


class AppendSignal:
    """Lets coroutines wait for the next append anywhere in the cluster."""

    def __init__(self) -> None:
        self._waiters: set[asyncio.Future[None]] = set()

    def notify(self) -> None:
        waiters, self._waiters = self._waiters, set()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def wait(self, timeout_s: float) -> bool:
        """Wait for the next append; False if `timeout_s` passed first."""
        if timeout_s <= 0:
            return False
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.add(waiter)
        try:
            await asyncio.wait_for(waiter, timeout_s)
            return True
        except asyncio.TimeoutError:
            return False
        finally:
            self._waiters.discard(waiter)
