"""Assert why a Spark query failed: a data-loss reason, a Spark condition or a Kafka error.

A failed query reaches Python as ``[STREAM_FAILED] ...`` (streaming) or a
Py4JJavaError (batch). The words a data-loss test wants (Spark's
``KAFKA_DATA_LOSS.<reason>`` condition, or the Kafka client's
``TopicAuthorizationException``) sit on JVM causes further down, and Spark 3.5
words data loss differently from 4.x. `query_failure` gathers all of it once
(conditions, the cause chain, data-loss reasons in 4.x terms) so a test names the
reason the way the tables of docs/how-to/data-loss.md do and the match holds on every Spark line.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from typing import Any

from kafkatest.spark.errors import (
    DATA_LOSS,
    DATA_LOSS_CONDITION,
    DATA_LOSS_WORDING,
    MAX_CAUSES,
    data_loss_reasons,
    error_conditions,
)

#: A JVM cause line as Spark prints it in a stack trace or a message.
_CAUSE_LINE = re.compile(
    r"(?:Caused by: )?((?:[a-z]\w*\.)+[A-Z]\w*(?:Exception|Error))(?::\s?(.*))?"
)
#: How many lines of the error text a mismatch message quotes.
QUOTED_LINES = 12


@dataclass(frozen=True)
class QueryFailure:
    """Why a query failed, in every form a test may want to match."""

    error: BaseException
    #: The first line of the error's own message (Spark's description).
    headline: str
    #: Spark error conditions of the error and its JVM causes, outermost first.
    conditions: list[str]
    #: JVM causes as ``fully.qualified.Exception: message``, outermost first.
    causes: list[str]
    #: Data-loss reasons the failure names, in Spark 4 terms (``COULD_NOT_READ_OFFSET_RANGE``).
    data_loss: list[str]
    text: str = field(repr=False)

    def names(self, reason: str) -> bool:
        """Whether the failure is `reason`: a data-loss reason, a condition or an exception."""
        if reason.startswith(f"{DATA_LOSS_CONDITION}."):
            reason = reason[len(DATA_LOSS_CONDITION) + 1 :]
        if any(reason in wording for wording in DATA_LOSS_WORDING.values()):
            return reason in self.data_loss
        if reason == DATA_LOSS_CONDITION:
            return bool(self.data_loss)
        if any(c == reason or c.startswith(f"{reason}.") for c in self.conditions):
            return True
        raised = [cause.split(":", 1)[0].strip() for cause in self.causes]
        if "." in reason:
            return reason in raised
        return any(name.rsplit(".", 1)[-1] == reason for name in raised)

    def says(self, words: str) -> bool:
        """Whether `words` appear in the error's text or in any cause's message."""
        return words in self.text or any(words in cause for cause in self.causes)

    def summary(self) -> str:
        """The lines that tell what happened, for a failure message (no stack frames)."""
        lines = [f"error: {type(self.error).__name__}: {self.headline}"]
        if self.conditions:
            lines.append(f"conditions: {', '.join(self.conditions)}")
        if self.data_loss:
            lines.append(f"data loss (Spark 4 terms): {', '.join(self.data_loss)}")
        lines += [f"caused by: {cause}" for cause in self.causes]
        return "\n".join(lines)


def query_failure(query_or_error: Any) -> QueryFailure | None:
    """The failure of a StreamingQuery (None while it has none) or of a raised exception."""
    known_conditions: list[str] = []
    if isinstance(getattr(query_or_error, "error", None), str) and hasattr(
        query_or_error, "conditions"
    ):  # a scenario's JobRun: the error's text and the conditions read off it in the run
        if not query_or_error.error:
            return None
        known_conditions = list(query_or_error.conditions)
        query_or_error = RuntimeError(query_or_error.error)
    elif isinstance(query_or_error, str):
        query_or_error = RuntimeError(query_or_error)
    error = _error_of(query_or_error)
    if error is None:
        return None
    text = str(error)
    conditions = [*known_conditions, *error_conditions(error)]
    for nested in _python_causes(error):
        conditions += [c for c in error_conditions(nested) if c not in conditions]
    causes = _jvm_causes(error)
    for line in text.splitlines():
        match = _CAUSE_LINE.fullmatch(line.strip())
        if match and line.strip().startswith(("Caused by:", "org.", "java.", "kafkashaded.")):
            cause = match.group(0).removeprefix("Caused by: ")
            if cause not in causes:
                causes.append(cause)
    headline = next((line for line in text.splitlines() if line.strip()), "")
    return QueryFailure(
        error=error,
        headline=headline,
        conditions=conditions,
        causes=causes,
        data_loss=_data_loss(text, causes, conditions),
        text=text,
    )


def assert_query_failed(
    query_or_error: Any, reason: str | None = None, *, message: str | None = None
) -> QueryFailure:
    """Assert that a query failed, for `reason` and with `message` when given.

    `query_or_error` is a StreamingQuery (finished or stopped), the exception a call
    raised (``wait_for_query``, a batch ``save()``), a scenario's ``result.run`` or the
    error's text. `reason` is what the README's
    tables name: a data-loss reason (``COULD_NOT_READ_OFFSET_RANGE`` or
    ``KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE``; any of them with
    ``KAFKA_DATA_LOSS``), a Spark error condition (``STREAM_FAILED``) or a Kafka
    client exception (``TopicAuthorizationException``, qualified or not). `message`
    is text the error or one of its causes must contain. On a mismatch the
    AssertionError quotes the failure's useful lines, never a bare stack trace.
    """
    failure = query_failure(query_or_error)
    if failure is None:
        raise AssertionError(
            f"expected the query to have failed, but it has no error: {query_or_error!r}"
        )
    problems = []
    if reason is not None and not failure.names(reason):
        problems.append(f"expected the failure to be {reason!r}")
    if message is not None and not failure.says(message):
        problems.append(f"expected the failure to say {message!r}")
    if problems:
        quoted = "\n".join(failure.text.splitlines()[:QUOTED_LINES])
        raise AssertionError(
            "; ".join(problems)
            + f"\n{failure.summary()}\n--- error text (first lines) ---\n{quoted}"
        )
    from kafkatest.spark.logs import note_expected_failure

    note_expected_failure()  # Spark's console lines about it are no news to this test
    return failure


def _error_of(query_or_error: Any) -> BaseException | None:
    if isinstance(query_or_error, BaseException):
        return query_or_error
    exception = getattr(query_or_error, "exception", None)
    if callable(exception):
        found = exception()
        return found if isinstance(found, BaseException) else None
    raise TypeError(
        f"assert_query_failed takes a StreamingQuery or an exception, not {type(query_or_error).__name__}"
    )


def _python_causes(error: BaseException) -> list[BaseException]:
    """PySpark's converted causes (``_cause``) and Python's own chain."""
    found: list[BaseException] = []
    current: Any = error
    for _ in range(MAX_CAUSES):
        current = getattr(current, "_cause", None) or current.__cause__
        if not isinstance(current, BaseException) or current in found:
            break
        found.append(current)
    return found


def _jvm_causes(error: BaseException) -> list[str]:
    """``class: message`` of every JVM throwable behind `error`, outermost first."""
    found: list[str] = []
    for nested in [error, *_python_causes(error)]:
        throwable: Any = getattr(nested, "_origin", None) or getattr(nested, "java_exception", None)
        for _ in range(MAX_CAUSES):
            if throwable is None:
                break
            with contextlib.suppress(Exception):
                described = str(throwable.toString())
                if described not in found:
                    found.append(described)
            try:
                throwable = throwable.getCause()
            except Exception:
                break
    return found


def _data_loss(text: str, causes: list[str], conditions: list[str]) -> list[str]:
    """Reasons named by condition, or (with Spark's data-loss words) by the reason's message.

    Spark Connect carries no JVM causes and PySpark 4.x's text names no condition, so
    the message stem ("Could not read records in offset [") is the reason there. The
    text says which Spark line wrote it, so every line's words are tried: an error
    text kept from a 4.x run is judged the same under an installed PySpark 3.5.
    """
    said = "\n".join([text, *causes])
    reasons: list[str] = []
    for major, wordings in sorted(DATA_LOSS_WORDING.items(), reverse=True):
        found = data_loss_reasons(said, conditions, major)
        if DATA_LOSS in said:
            found += [
                reason
                for reason, wording in wordings.items()
                if len(stem := wording.message.split("{", 1)[0].strip()) > 8 and stem in said
            ]
        # A reason named and worded in one text (3.5 does both) is one reason.
        reasons += [reason for reason in dict.fromkeys(found) if reason not in reasons]
    return reasons
