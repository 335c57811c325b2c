"""Start something slow on a thread now, and take it (or its error) when it is needed.

A test run that uses both Spark and a broker waits for each in turn: Spark's session
(seconds, or a JVM start) and then the broker's start (the emulator's import, or a
Kafka JVM). Neither needs the other, so the pytest plugin starts the broker beside
Spark. Whoever needs the result takes it once and owns it; a start nobody took is
released at the end, so nothing leaks when the run stops early.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class BackgroundStart(Generic[T]):
    """`start()` running on its own thread from construction on."""

    def __init__(self, start: Callable[[], T], name: str) -> None:
        self._start = start
        self._result: T | None = None
        self._error: BaseException | None = None
        self._taken = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._result = self._start()
        except BaseException as exc:  # handed to whoever takes it, in their thread
            self._error = exc

    def take(self) -> T | None:
        """Wait for the start and return what it made; None once it has been taken.

        A failed start raises its exception here, in the taker's thread, as if the
        taker had started it itself (and it counts as taken: the caller may retry).
        """
        with self._lock:
            if self._taken:
                return None
            self._taken = True
        self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self._result

    def discard(self, release: Callable[[T], None]) -> None:
        """Wait for the start and `release` what it made, unless it was taken."""
        with self._lock:
            if self._taken:
                return
            self._taken = True
        self._thread.join()
        if self._error is None and self._result is not None:
            release(self._result)
