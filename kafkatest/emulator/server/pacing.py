"""Long handlers give the event loop back now and then.

Every connection of every broker is served on one asyncio loop, inside the test
process. A handler whose work grows with a count the client chose (a
DescribeConfigs naming thousands of resources) would otherwise hold that loop,
and every other client's requests, until it is done; Kafka serves such a request
on one of its handler threads while the others keep answering.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Generator
from typing import TypeVar

R = TypeVar("R")

#: The longest stretch a paced handler works before other requests get their turn.
SLICE_S = 0.01


class Pacer:
    """Call `breathe()` between units of a handler's work: once the current slice is
    used up it lets every other ready task run before the handler goes on."""

    __slots__ = ("_since",)

    def __init__(self) -> None:
        self._since = time.perf_counter()

    async def breathe(self) -> None:
        if time.perf_counter() - self._since >= SLICE_S:
            await asyncio.sleep(0)
            self._since = time.perf_counter()


async def run_paced(steps: Generator[None, None, R], pacer: Pacer | None = None) -> R:
    """Run a state change written as steps (a generator that yields between units of
    its work and returns its result), breathing between them: `state` knows nothing
    of the loop, and a handler drives it this way."""
    pacer = pacer or Pacer()
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
        await pacer.breathe()
