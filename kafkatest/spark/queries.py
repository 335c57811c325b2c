"""Waiting for streaming queries without ever hanging a test."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from kafkatest.errors import KafkaTestError

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery


class QueryTimeout(KafkaTestError):
    """A streaming query did not finish in time; it has been stopped.

    The message is one line (where the query got to, and what to do); the last
    progress report, a screen of JSON, is `progress` for a test that wants it.
    """

    def __init__(self, message: str, progress: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        #: The query's last progress report (None when no batch had finished).
        self.progress = progress


def describe_progress(progress: Mapping[str, Any] | None) -> str:
    """Where a query got to, in a phrase: its last batch, rows read, each source's offsets.

    A timeout's message used to end with the whole progress JSON (PySpark 3.5 prints
    its dict on one line, and pytest repeats the message in its summary): unreadable
    where the user needs the one fact that decides what to do, whether the query was
    moving at all.
    """
    if progress is None:
        return "no batch had finished"
    sources = [
        f"{source.get('description', 'source')} at {_compact(source.get('endOffset'))}"
        f" (latest {_compact(source.get('latestOffset'))})"
        for source in progress.get("sources") or []
    ]
    return f"last batch {progress.get('batchId')} read {progress.get('numInputRows')} rows" + (
        f"; {', '.join(sources)}" if sources else ""
    )


def _compact(offsets: Any) -> str:
    if isinstance(offsets, str):
        with contextlib.suppress(ValueError):
            offsets = json.loads(offsets)
    return json.dumps(offsets, separators=(",", ":")) if not isinstance(offsets, str) else offsets


def wait_for_query(query: StreamingQuery, timeout_s: float = 120.0) -> None:
    """Wait for a query that ends by itself (Trigger.AvailableNow / once).

    Re-raises the query's own exception if it failed, and stops it and raises
    QueryTimeout if it is still running after `timeout_s`, so a bad option or a
    broker that went away fails the test instead of hanging it.
    """
    try:
        # PySpark takes fractional seconds (it sends milliseconds); its stub says int.
        finished = query.awaitTermination(cast(int, timeout_s))
    except KeyboardInterrupt:
        stop_quietly(query)
        raise
    if not finished:
        progress = query.lastProgress
        query.stop()
        raise QueryTimeout(
            f"streaming query {query.name or query.id} still running after {timeout_s:.0f}s "
            f"and was stopped ({describe_progress(progress)}). If its offsets were still "
            "moving, it is slow, not stuck (a loaded machine): give it longer with "
            f"wait_for_query(query, timeout_s={max(2 * timeout_s, 300):.0f})",
            dict(progress) if progress is not None else None,
        )
    error = query.exception()
    if error is not None:
        raise error


Row = TypeVar("Row")

#: How often `wait_for_rows` reads the sink again.
ROWS_POLL_S = 0.25


def wait_for_rows(
    read: Callable[[], Sequence[Row]],
    count: int,
    *,
    query: StreamingQuery | None = None,
    timeout_s: float = 120.0,
) -> list[Row]:
    """Wait until `read()` returns at least `count` rows; return them.

    For a query that never finishes by itself (a processing-time or Real-Time Mode
    trigger), where `wait_for_query` would wait forever: `read` is any sink reader,
    such as ``lambda: topic_rows(kafka_broker, "out")``, asked again every
    `ROWS_POLL_S`. Given the `query` writing the sink, its own error is raised as soon
    as it fails, and a query that ends (or is still short of rows after `timeout_s`) is
    stopped; `QueryTimeout` then says how many rows had come. The query keeps running
    once the rows are there. Without `query` (a job in a process of its own) only the
    rows and the time are watched.
    """
    if count < 0:
        raise ValueError(f"count must be 0 or more, not {count}")
    deadline = time.monotonic() + timeout_s
    while True:
        if query is not None and not query.isActive:
            error = query.exception()
            if error is not None:
                raise error
        rows = list(read())
        if len(rows) >= count:
            return rows
        ended = query is not None and not query.isActive
        if ended or time.monotonic() >= deadline:
            raise _short_of_rows(query, len(rows), count, timeout_s, ended)
        time.sleep(ROWS_POLL_S)


def _short_of_rows(
    query: StreamingQuery | None, seen: int, count: int, timeout_s: float, ended: bool
) -> Exception:
    """The error `wait_for_rows` raises: the query's own if stopping it shows one."""
    when = "ended" if ended else f"still running after {timeout_s:.0f}s"
    longer = f"give it longer with timeout_s={max(2 * timeout_s, 300):.0f}"
    if query is None:
        return QueryTimeout(
            f"the sink has {seen} of the {count} rows expected after {timeout_s:.0f}s; if "
            f"rows were still arriving, the job is slow, not stuck: {longer}"
        )
    progress = query.lastProgress
    with contextlib.suppress(Exception):
        query.stop()
    error = query.exception()
    if error is not None:
        return error
    return QueryTimeout(
        f"streaming query {query.name or query.id} {when} with {seen} of the {count} rows "
        f"expected in its sink, and was stopped ({describe_progress(progress)}). If rows "
        f"were still arriving, it is slow, not stuck: {longer}",
        dict(progress) if progress is not None else None,
    )


def stop_quietly(query: StreamingQuery) -> None:
    """Stop `query` after Ctrl-C, and let nothing but the KeyboardInterrupt surface.

    PySpark's SIGINT handler has already cancelled the running jobs, and the py4j
    call the interrupt landed in may have left its connection mid-answer: stopping
    can then fail in py4j, and that traceback must not replace the interrupt (the
    run would end as a failed test instead of an interrupted one).
    """
    with contextlib.suppress(Exception):
        query.stop()


def progress_reports(query: StreamingQuery) -> list[dict[str, Any]]:
    """The query's recent progress reports as plain JSON data, oldest first.

    Read from the JVM's JSON on a classic session: PySpark 4.2's parser fails with
    ``KeyError: 'inputRowsPerSecond'`` on a report Spark wrote without rates (a batch
    that took no time on a manual clock). Over Spark Connect the client's reports are
    taken as they come.
    """
    jsq = getattr(query, "_jsq", None)
    if jsq is not None:
        return [dict(json.loads(report.json())) for report in jsq.recentProgress()]
    out = []
    for report in query.recentProgress:
        if isinstance(report, Mapping):
            out.append(dict(report))
        else:  # PySpark 4's StreamingQueryProgress: its JSON text is `.json`
            out.append(dict(json.loads(getattr(report, "json", "{}"))))
    return out
