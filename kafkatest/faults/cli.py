"""`kafkatest fault <action> ...`: inject faults into a standalone emulator.

Options become the action's parameters (only those given are sent); the
control interface checks them, so the CLI needs no rules of its own. The
result is printed as JSON; a refused request exits with status 2 and the
interface's reason.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kafkatest.config import environment
from kafkatest.faults.control_actions import ACTIONS
from kafkatest.faults.registry import all_faults


def _boolean(text: str) -> bool:
    if text.lower() in ("true", "yes", "1"):
        return True
    if text.lower() in ("false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r}: give true or false")


def _option_kind(types: tuple[type, ...]) -> Any:
    """How a command line word becomes a parameter of these JSON types."""
    if types == (int,):
        return int
    if set(types) == {int, float}:
        return float
    if types == (bool,):
        return _boolean
    if set(types) == {int, dict}:
        return "offsets"
    return str  # a name, or a name or number (`api`, `error`: digits are sent as numbers)


def _options() -> dict[str, tuple[str, Any, str]]:
    """option -> (parameter name, kind, help), one per parameter of any declared fault."""
    out: dict[str, tuple[str, Any, str]] = {}
    for spec in all_faults().values():
        for param in spec.params:
            if param.types == (dict,):
                continue  # `config`: the repeatable --config KEY=VALUE below
            option = "--" + param.name.replace("_", "-")
            out.setdefault(option, (param.name, _option_kind(param.types), param.help))
    out["--id"] = ("id", int, "remove: the fault id")
    return out


#: option -> (parameter name, kind, help): made from the fault registry.
_OPTIONS = _options()


def add_fault_parser(commands: Any) -> None:
    fault = commands.add_parser(
        "fault",
        help="inject a fault into a standalone emulator (kafkatest emulator --control-port)",
    )
    fault.add_argument("action", choices=list(ACTIONS))
    fault.add_argument(
        "--control",
        default=environment("KAFKATEST_CONTROL") or None,
        help="host:port of the emulator's control interface (env KAFKATEST_CONTROL)",
    )
    for option, (dest, kind, text) in _OPTIONS.items():
        parse = _offsets if kind == "offsets" else kind
        fault.add_argument(option, dest=dest, type=parse, default=None, help=text)
    fault.add_argument(
        "--config",
        action="append",
        type=_config_item,
        default=None,
        help="recreate_topic: topic config KEY=VALUE",
    )
    fault.set_defaults(run=run_fault)


def run_fault(args: argparse.Namespace) -> int:
    from kafkatest.faults.control_client import ControlClient

    declared = all_faults().get(args.action)
    if declared is not None and declared.local_only:
        print(
            f"kafkatest fault: {args.action} is not done here: {declared.local_only}",
            file=sys.stderr,
        )
        return 2
    if not args.control:
        print("kafkatest fault: give --control host:port (or KAFKATEST_CONTROL)", file=sys.stderr)
        return 2
    params: dict[str, Any] = {}
    for dest, _kind, _text in _OPTIONS.values():
        value = getattr(args, dest)
        if value is not None:
            params[dest] = value
    if args.config:
        params["config"] = dict(args.config)
    for name in ("api", "error"):
        if isinstance(params.get(name), str) and params[name].lstrip("-").isdigit():
            params[name] = int(params[name])
    result = ControlClient(args.control).call(args.action, **params)
    print(json.dumps(result))
    return 0


def _offsets(text: str) -> int | dict[str, int]:
    """``5`` or ``0=5,1=7``; anything else is a usage error naming the option."""
    try:
        if "=" not in text:
            return int(text)
        pairs = (pair.split("=", 1) for pair in text.split(","))
        return {str(int(p)): int(o) for p, o in pairs}
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give an offset for every partition (5) or PARTITION=OFFSET pairs (0=5,1=7)"
        ) from None


def _config_item(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r}: give KEY=VALUE, e.g. retention.ms=1000")
    return key, value
