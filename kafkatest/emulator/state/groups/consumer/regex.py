"""Topic regular expressions of consumer groups (KIP-848's SubscribedTopicRegex).

Kafka compiles them with RE2J; the emulator uses RE2, which has the same syntax and
matches in linear time, so a client's regex cannot stall the in-process emulator.
Errors carry RE2J's wording, as Kafka's INVALID_REGULAR_EXPRESSION messages do.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import re2
from kio.schema.errors import ErrorCode

from kafkatest.emulator.state.groups.consumer.model import HeartbeatError

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False
_NAMED_GROUP = re.compile(r"\(\?P<([^>]*)>")
#: RE2's error codes -> RE2J's descriptions (checked against re2j 1.8, Kafka 4.1's).
_RE2J_WORDING = {
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "bad repetition operator": "invalid nested repetition operator",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "regexp/syntax: internal error",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "trailing \\": "trailing backslash at end of expression",
    "invalid named capture group": "invalid named capture",
}


def validate_regex(regex: str) -> None:
    """INVALID_REGULAR_EXPRESSION, with RE2J's description, for what it cannot compile."""
    compile_regex(regex)


def compile_linear(regex: str) -> Any:
    """`regex` compiled by RE2, which matches in time linear in the text, so no pattern
    a client sends can stall the in-process emulator; raises ``re2.error``."""
    return re2.compile(regex, _RE2_OPTIONS)


@functools.lru_cache(maxsize=256)
def compile_regex(regex: str) -> Any:
    """RE2 (linear time, as Kafka's RE2J: a client's regex cannot stall the broker)."""
    problem = None
    try:
        compiled = compile_linear(regex)
    except re2.error as exc:
        problem = _re2j_description(exc)
    else:
        names = _NAMED_GROUP.findall(regex)
        if len(names) != len(set(names)):
            problem = "duplicate capture group name"
    if problem is not None:
        raise HeartbeatError(
            ErrorCode.invalid_regular_expression,
            f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {problem}.",
        )
    return compiled


def _re2j_description(exc: Exception) -> str:
    """RE2's error in the words of RE2J's PatternSyntaxException.getDescription()."""
    raw = exc.args[0] if exc.args else ""
    text = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
    code, _, operand = text.partition(": ")
    if code == "invalid perl operator" and operand.startswith("(?<"):
        return "invalid named capture"
    return _RE2J_WORDING.get(code, code)
