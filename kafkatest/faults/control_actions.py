"""The control interface's vocabulary: each action, its parameters and their types.

HTTP requests and `kafkatest fault` both come from outside Python, so every
parameter is checked here before a `Faults` method sees it; a mistake becomes a
`BadRequest` saying which parameter and what was expected, never an exception
inside the emulator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafkatest.faults.api import Faults
from kafkatest.faults.registry import FaultSpec, all_faults

#: The control verbs (they list and remove faults; they are no faults themselves).
_VERBS: dict[str, dict[str, Any]] = {"list": {}, "clear": {}, "remove": {"id": int}}


def _signature(spec: FaultSpec) -> dict[str, Any]:
    """A declared fault's parameters as this interface checks them ("?": optional)."""
    return {
        p.name + ("" if p.required else "?"): p.types[0] if len(p.types) == 1 else p.types
        for p in spec.params
    }


#: action -> parameters; a trailing "?" marks an optional one. Made from the fault
#: registry (`registry.py`): declare a fault there and it is an action here.
ACTIONS: dict[str, dict[str, Any]] = {
    **_VERBS,
    **{name: _signature(spec) for name, spec in all_faults().items()},
}


class BadRequest(ValueError):
    """The request names an unknown action or carries wrong parameters."""


class UnknownFault(LookupError):
    """`remove` named an id no active fault has (never given, spent or removed):
    the HTTP interface answers 404 with this message, the CLI exits 2 with it."""


def checked_params(action: str, params: object) -> dict[str, Any]:
    """`params` validated against the action's signature (raises BadRequest)."""
    if action not in ACTIONS:
        raise BadRequest(f"unknown action {action!r}; actions: {', '.join(ACTIONS)}")
    declared = all_faults().get(action)
    if declared is not None and declared.local_only:
        raise BadRequest(
            f"{action} is not done through the control interface: {declared.local_only}"
        )
    if not isinstance(params, Mapping):
        raise BadRequest("the body must be a JSON object of parameters")
    spec = ACTIONS[action]
    names = {name.rstrip("?"): name.endswith("?") for name in spec}
    unknown = sorted(set(params) - set(names))
    if unknown:
        allowed = ", ".join(names) or "none"
        raise BadRequest(f"{action}: unknown parameter(s) {unknown}; allowed: {allowed}")
    missing = [name for name, optional in names.items() if not optional and name not in params]
    if missing:
        raise BadRequest(f"{action}: missing parameter(s) {missing}")
    out: dict[str, Any] = {}
    for key, expected in spec.items():
        name = key.rstrip("?")
        if name not in params or (key.endswith("?") and params[name] is None):
            continue
        value = params[name]
        types = expected if isinstance(expected, tuple) else (expected,)
        if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
            wanted = " or ".join(t.__name__ for t in types)
            raise BadRequest(f"{action}: {name} must be {wanted}, not {value!r}")
        out[name] = value
    for name in ("before", "until"):  # JSON object keys are text: {"0": 5}
        if isinstance(out.get(name), dict):
            out[name] = _partition_offsets(action, name, out[name])
    return out


def _partition_offsets(action: str, name: str, raw: Mapping[str, Any]) -> dict[int, int]:
    if not raw or not all(
        str(p).isdigit() and isinstance(o, int) and not isinstance(o, bool) for p, o in raw.items()
    ):
        raise BadRequest(
            f'{action}: {name} must map partitions to offsets ({{"0": 5}}), not {raw!r}'
        )
    return {int(p): o for p, o in raw.items()}


def perform(faults: Faults, action: str, params: Mapping[str, Any]) -> Any:
    """Run a checked action; the JSON-ready result."""
    if action == "list":
        return faults.active()
    if action == "remove":
        # The wire name is "id" (as `list` shows it); the method's is `fault_id`.
        fault_id = params["id"]
        if not faults.remove(fault_id):
            raise UnknownFault(
                f"remove: no active fault has id {fault_id} (it was never given, has "
                "run out or was removed); GET /faults or `kafkatest fault list` lists them"
            )
        return True
    if action == "clear":
        return faults.clear()
    result = all_faults()[action].run(faults, **params)
    if isinstance(result, dict):
        return {str(k): v for k, v in result.items()}
    return result
