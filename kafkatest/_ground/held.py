"""A method of an object another holds, offered as the holder's own method.

Composition without a wall of forwarding methods: ``append = held("writes",
PartitionWrites.append)`` in a class body makes ``state.append(...)`` call
``state.writes.append(...)``, with the same name, signature and docstring, and mypy
checks the arguments through the `ParamSpec`. The emulator holds its writer and log
maintenance this way (`state.broker_state`), and the harness's `Broker` its clients.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

C = TypeVar("C")
P = ParamSpec("P")
R = TypeVar("R")


def held(
    attribute: str, method: Callable[Concatenate[C, P], R]
) -> Callable[Concatenate[Any, P], R]:
    """`method` of the object the holder keeps as `attribute`, as a method of the holder."""

    def call(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(getattr(self, attribute), *args, **kwargs)

    call.__name__ = call.__qualname__ = method.__name__
    call.__doc__ = method.__doc__
    call.__wrapped__ = method  # type: ignore[attr-defined]
    return call
