"""The one declaration of every fault: name, parameters, help, backends, function.

A fault is declared once, by decorating the function that does it::

    @fault(needs=Capability.REQUEST_HOOKS, why=NEEDS_A_PROXY)
    def slow_fetch(self, delay_ms: int, times: int | None = None, ...) -> int:
        \"\"\"Delay the next `times` Fetch requests by `delay_ms`; the fault id.\"\"\"

Its name is the function's, its parameters (names, JSON types, which are
required) are read from the signature, its help is the docstring's first line,
and each parameter's help comes from `PARAMETERS` (one text per name, shared by
every fault) or from the declaration's `params`. The backends that can do it are
not listed: they are those whose `Broker` class declares the capability the fault
`needs` (`kafkatest.brokers.capabilities`), so a new backend gets every fault it
is able to do by declaring what it can do. From these entries are made:
the `Faults` methods (the decorated functions are those methods, of `Faults` or of a
part it holds, and ``FAULTS[name].run(faults, ...)`` calls the one of that name), the
HTTP control actions (`control_actions.ACTIONS`), the options of `kafkatest fault`
(`cli.py`) and the scenario actions (`scenarios/actions.py`). A call on a backend
the declaration does not list is refused before the function runs.

A new module declares its faults the same way and lists itself once in
`FAULT_MODULES`, so that every surface sees them.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import types
import typing
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from kafkatest.brokers.capabilities import Capability
from kafkatest.emulator import InvalidFault
from kafkatest.errors import UnsupportedOperation
from kafkatest.limits import MAX_CLOCK_STEP_MS, MAX_INT, MAX_LONG

F = TypeVar("F", bound=Callable[..., Any])

#: Why a real broker cannot do an emulator-only fault.
NEEDS_A_PROXY = "is a real broker, which would need a fault-injecting proxy in front of it"

#: Modules that declare faults; importing them fills `FAULTS`.
FAULT_MODULES = ("kafkatest.faults.api",)

#: One help text per parameter name, shared by every fault that takes it.
PARAMETERS = {
    "topic": "topic name",
    "partition": "partition index",
    "partitions": "partition count of a recreated topic",
    "config": "topic config KEY=VALUE",
    "total": "partition count after add_partitions",
    "before": "offset for every partition, or P=O,P=O",
    "until": "compact_now: offset the cleaner must reach, or P=O,P=O",
    "roll": "compact_now: roll the active segment first",
    "retention_ms": "age_out_records: retention to apply",
    "api": "Kafka API name or key (Produce, Fetch, 0, ...)",
    "error": "Kafka error name or code (NOT_LEADER_OR_FOLLOWER, 6)",
    "times": "how many requests the fault hits",
    "delay_ms": "delay per request, in milliseconds",
    "to_broker": "move_leader: the new leader's broker id",
    "broker_id": "the broker's id in the cluster",
    "ms": "advance_clock: milliseconds",
    "payload": "poison: what the records hold (wrong-magic, ...)",
    "count": "poison: how many records",
    "schema_id": "poison: the schema id a record names",
    "records": "how many records the transaction writes",
    "transaction_timeout_ms": "the transaction's timeout",
}

#: The largest value of each bounded parameter, shared by every fault that takes it,
#: and why: checked before the fault runs, whichever surface called it (Python, HTTP,
#: `kafkatest fault`, a scenario file), and when a scenario file is loaded
#: (`check_ranges`). The bounds themselves are `kafkatest.limits`'.
MAXIMA: dict[str, tuple[int, str]] = {
    "retention_ms": (MAX_CLOCK_STEP_MS, "100 years (the emulator moves its clock that far)"),
    "ms": (MAX_CLOCK_STEP_MS, "100 years; check the units"),
    "before": (MAX_LONG, "Kafka's offsets are longs"),
    "until": (MAX_LONG, "Kafka's offsets are longs"),
    "partition": (MAX_INT, "Kafka's partition indexes are ints"),
    "to_broker": (MAX_INT, "Kafka's broker ids are ints"),
    "broker_id": (MAX_INT, "Kafka's broker ids are ints"),
    "times": (MAX_INT, "use None for every request until cleared"),
    "schema_id": (MAX_INT, "a schema id is an int"),
}

#: Python-only parameters: how long a call waits is not part of a fault.
_PYTHON_ONLY = frozenset({"timeout_s"})


@dataclass(frozen=True)
class Param:
    """One parameter as it arrives from outside Python (JSON, a command line, YAML)."""

    name: str
    #: The JSON types accepted (an int where a float is, a dict for a mapping).
    types: tuple[type, ...]
    required: bool
    help: str


@dataclass(frozen=True)
class FaultSpec:
    name: str
    help: str
    #: What the broker must be able to do; none: every backend can.
    needs: frozenset[Capability]
    params: tuple[Param, ...]
    #: Called as ``run(faults, **params)``: the `Faults` method of this name.
    run: Callable[..., Any]
    #: Whether a scenario file may use it (faults that only report, like topic_id, not).
    scenario: bool = True
    #: Why the control interface (HTTP, `kafkatest fault`) refuses it, if it must be
    #: done where the caller runs (a checkpoint is a path on the job's machine).
    local_only: str = ""

    @property
    def backends(self) -> frozenset[str]:
        """The backends that can do it: those whose class declares every capability
        it needs (asked when wanted, so declaring a fault imports no backend)."""
        return _backends_with(self.needs)


FAULTS: dict[str, FaultSpec] = {}
#: Old names still accepted where they were public (scenario files), with a warning.
ALIASES: dict[str, str] = {}


def fault(
    *,
    needs: Capability | None = None,
    why: str = "cannot do it",
    params: Mapping[str, str] | None = None,
    scenario: bool = True,
    aliases: tuple[str, ...] = (),
    local_only: str = "",
) -> Callable[[F], F]:
    """Declare the decorated function (``(faults, ...)``, a `Faults` method or not) a fault.

    `local_only`, when given, is why the control interface refuses it: the fault acts on
    the caller's machine (a file path), which a standalone emulator's process does not share.
    """

    def declare(function: F) -> F:
        name = function.__name__
        needed: frozenset[Capability] = frozenset() if needs is None else frozenset({needs})
        signature = inspect.signature(function)

        @functools.wraps(function)
        def run(faults: Any, *args: Any, **kwargs: Any) -> Any:
            broker = faults.broker
            if not needed <= broker.capabilities:
                wanted = " or ".join(sorted(_backends_with(needed)))
                raise UnsupportedOperation(
                    f"{name} needs the {wanted} backend: the {broker.backend!r} backend {why}"
                )
            check_ranges(name, signature.bind(faults, *args, **kwargs).arguments)
            return function(faults, *args, **kwargs)

        FAULTS[name] = FaultSpec(
            name,
            (inspect.getdoc(function) or name).split("\n")[0],
            needed,
            _params_of(function, params or {}),
            lambda faults, *args, **kwargs: getattr(faults, name)(*args, **kwargs),
            scenario,
            local_only,
        )
        for alias in aliases:
            ALIASES[alias] = name
        return typing.cast(F, run)

    return declare


def check_ranges(action: str, arguments: Mapping[str, Any]) -> None:
    """Refuse an argument over its `MAXIMA` (an offsets mapping: each offset), naming
    the action, the parameter and the bound; what is below them the fault checks."""
    for parameter, value in arguments.items():
        bound = MAXIMA.get(parameter)
        if bound is None:
            continue
        values = value.values() if isinstance(value, Mapping) else (value,)
        for one in values:
            if isinstance(one, int) and not isinstance(one, bool) and one > bound[0]:
                raise InvalidFault(
                    f"{action}: {parameter} {one} is over the limit of {bound[0]}: {bound[1]}"
                )


def _backends_with(needed: frozenset[Capability]) -> frozenset[str]:
    from kafkatest.brokers.registry import backends_with

    return backends_with(*needed)


def all_faults() -> dict[str, FaultSpec]:
    """Every declared fault, the declaring modules imported first."""
    for module in FAULT_MODULES:
        importlib.import_module(module)
    return FAULTS


def canonical(name: str) -> str:
    """`name`, or the fault an old name now stands for (with a DeprecationWarning)."""
    if name in ALIASES:
        new = ALIASES[name]
        warnings.warn(
            f"the action {name!r} is now called {new!r}; the old name will go",
            DeprecationWarning,
            stacklevel=3,
        )
        return new
    return name


def _params_of(function: Callable[..., Any], helps: Mapping[str, str]) -> tuple[Param, ...]:
    hints = typing.get_type_hints(function)
    out = []
    for parameter in list(inspect.signature(function).parameters.values())[1:]:
        if parameter.name in _PYTHON_ONLY:
            continue
        text = helps.get(parameter.name, PARAMETERS.get(parameter.name))
        if text is None:
            raise TypeError(f"fault {function.__name__}: give {parameter.name!r} a help text")
        out.append(
            Param(
                parameter.name,
                json_types(hints[parameter.name]),
                parameter.default is inspect.Parameter.empty,
                text,
            )
        )
    return tuple(out)


def json_types(hint: Any) -> tuple[type, ...]:
    """The JSON types a Python annotation accepts (None left out: it means "not given")."""
    options = (
        typing.get_args(hint)
        if typing.get_origin(hint) in (typing.Union, types.UnionType)
        else (hint,)
    )
    out: list[type] = []
    for option in options:
        origin = typing.get_origin(option) or option
        if option is type(None):
            continue
        if origin is float:
            out += [int, float]
        elif isinstance(origin, type) and issubclass(origin, Mapping):
            out.append(dict)
        elif isinstance(origin, type):
            out.append(origin)
    return tuple(dict.fromkeys(out))
