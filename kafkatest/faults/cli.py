"""`kafkatest fault <action> ...`: inject faults into a standalone emulator.

Options become the action's parameters (only those given are sent); the
control interface checks them, so the CLI needs no rules of its own. The
result is printed as JSON; a refused request exits with status 2 and the
interface's reason.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from kafkatest.faults.control_actions import ACTIONS

#: option -> (parameter name, type)
_OPTIONS: dict[str, tuple[str, Any, str]] = {
    "--topic": ("topic", str, "topic name"),
    "--partition": ("partition", int, "partition index"),
    "--partitions": ("partitions", int, "partition count of a recreated topic"),
    "--total": ("total", int, "partition count after add_partitions"),
    "--before": ("before", "offsets", "offset for every partition, or P=O,P=O"),
    "--until": ("until", "offsets", "compact_now: offset the cleaner must reach, or P=O,P=O"),
    "--retention-ms": ("retention_ms", int, "age_out_records: retention to apply"),
    "--api": ("api", str, "Kafka API name or key (Produce, Fetch, 0, ...)"),
    "--error": ("error", str, "Kafka error name or code (NOT_LEADER_OR_FOLLOWER, 6)"),
    "--times": ("times", int, "how many requests the fault hits"),
    "--delay-ms": ("delay_ms", int, "add_latency: delay per request"),
    "--to-broker": ("to_broker", int, "move_leader: the new leader's broker id"),
    "--ms": ("ms", int, "advance_clock: milliseconds"),
    "--id": ("id", int, "remove: the fault id"),
}


def add_fault_parser(commands: Any) -> None:
    fault = commands.add_parser(
        "fault",
        help="inject a fault into a standalone emulator (kafkatest emulator --control-port)",
    )
    fault.add_argument("action", choices=list(ACTIONS))
    fault.add_argument(
        "--control",
        default=os.environ.get("KAFKATEST_CONTROL"),
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
        if name in params and params[name].lstrip("-").isdigit():
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
