"""The broker's log4j loggers, as the BROKER_LOGGER config resource shows and changes
them (KIP-412).

The emulator logs through Python, not log4j, so it keeps Kafka's loggers as data: the
names a broker of the emulated release (`kafkatest.emulator.release`) run by the `kafka`
backend has once it has served a few clients (`data/kafka_loggers.json`), and the levels of kafkatest's log4j
configuration for that backend. A logger without a level of its own has its nearest
configured ancestor's (`kafka` for `kafka.server.ReplicaManager`), as in log4j.
Changing a level changes what the describes show, and nothing the emulator logs.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from kafkatest.emulator.state.errors import InvalidConfig, InvalidRequest, UnknownServerError

ROOT = "root"
#: log4j's levels, as Kafka lists them in its refusal.
LEVELS = ("DEBUG", "ERROR", "FATAL", "INFO", "TRACE", "WARN")
_SET, _DELETE, _APPEND, _SUBTRACT = 0, 1, 2, 3


@cache
def _table() -> tuple[tuple[str, ...], dict[str, str]]:
    text = (
        resources.files("kafkatest.emulator.state")
        .joinpath("data/kafka_loggers.json")
        .read_text(encoding="utf-8")
    )
    data = json.loads(text)
    return tuple(data["loggers"]), dict(data["configured"])


class BrokerLoggers:
    """Each logger's level: the ones set (by configuration or a client), inherited
    by the rest."""

    def __init__(self) -> None:
        names, configured = _table()
        self._names = names
        self._known = frozenset(names)
        self._levels: dict[str, str] = dict(configured)

    def levels(self) -> list[tuple[str, str]]:
        """Every logger with its effective level, in Kafka's table order."""
        return [(name, self.level(name)) for name in self._names]

    def level(self, name: str) -> str:
        if name in self._levels:
            return self._levels[name]
        parent = name
        while "." in parent:
            parent = parent.rsplit(".", 1)[0]
            if parent in self._levels:
                return self._levels[parent]
        return self._levels[ROOT]

    def check(self, name: str, operation: int, level: str | None) -> None:
        """Kafka's RuntimeLoggerManager checks of one change, with its words."""
        if operation == _SET:
            self._check_exists(name)
            if level not in LEVELS:
                raise InvalidConfig(
                    f"Cannot set the log level of {name} to {level} as it is not a supported "
                    f"log level. Valid log levels are {', '.join(LEVELS)}"
                )
        elif operation == _DELETE:
            self._check_exists(name)
            if name == ROOT:
                raise InvalidRequest("Removing the log level of the root logger is not allowed")
        elif operation in (_APPEND, _SUBTRACT):
            verb = "APPEND" if operation == _APPEND else "SUBTRACT"
            raise InvalidRequest(f"{verb} operation is not allowed for the BROKER_LOGGER resource")
        else:
            raise UnknownServerError("")  # Kafka fails on an operation type it does not know

    def apply(self, name: str, operation: int, level: str | None) -> None:
        if operation == _SET and level is not None:
            self._levels[name] = level
        elif operation == _DELETE:
            self._levels.pop(name, None)

    def _check_exists(self, name: str) -> None:
        if name not in self._known:
            raise InvalidConfig(f"Logger {name} does not exist!")
