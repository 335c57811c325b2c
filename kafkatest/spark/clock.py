"""A manual clock for streaming queries: processing time that moves when the test says.

Spark's micro-batch engine reads one clock, the query's trigger clock, for the batch
timestamp (what `current_timestamp()` returns and what processing-time state timeouts
compare against) and for when a processing-time trigger fires. Spark's own tests pass
a `ManualClock` to `StreamingQueryManager.startQuery`; `DataStreamWriter.start()` never
does (it leaves the parameter at its `SystemClock` default) and PySpark has no way to.

So the clock is handed over just after the query is created: a listener on the
session's StreamingQueryManager receives `QueryStartedEvent`, which Spark posts
synchronously on the query's own thread before it builds its plan, its trigger
executor or its first batch, and replaces the system clock in the query's fields with
one `org.apache.spark.util.ManualClock` (spark-core ships it). The fields differ by
line (3.5 builds its trigger executor in the constructor; 4.x keeps the clock in a
progress reporter and execution contexts too), so every field typed `Clock` in the
query and in its trigger executor, progress reporter and execution contexts is set.

Spark Connect queries live in the server's JVM, out of the client's reach: refused.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from kafkatest.clocks import duration_ms
from kafkatest.errors import KafkaTestError
from kafkatest.spark.connect import is_connect_session
from kafkatest.spark.queries import QueryTimeout, describe_progress

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

_CLOCK_TYPE = "org.apache.spark.util.Clock"
#: Fields of a query whose objects hold a clock of their own (a copy of the query's).
_CLOCK_HOLDERS = ("TriggerExecutor", "ProgressReporter", "ExecutionContext")
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


class QueryClockError(KafkaTestError):
    """The query clock cannot be used here (Spark Connect, or a query it missed)."""


class QueryClock:
    """Processing time for the queries a session starts under `query_clock`.

    Batches run with the batch timestamp this clock shows; a processing-time trigger
    fires when `advance` reaches its next interval, not before. A
    `kafkatest.clocks.MovableClock`, as `kafka_broker.clock` is.
    """

    def __init__(self, manual_clock: Any) -> None:
        self._manual = manual_clock
        self._lock = threading.Lock()
        self._failures: list[str] = []
        self._queries: list[str] = []

    def now_ms(self) -> int:
        """The clock's time, in epoch milliseconds."""
        self._raise_failures()
        return int(self._manual.getTimeMillis())

    def advance(
        self, seconds: float = 0, minutes: float = 0, hours: float = 0, days: float = 0
    ) -> int:
        """Move processing time forward; triggers that fall due fire. Returns `now_ms()`."""
        step = duration_ms(seconds, minutes, hours, days)
        self._raise_failures()
        self._manual.advance(step)
        return self.now_ms()

    @property
    def query_ids(self) -> list[str]:
        """Ids of the queries that run on this clock."""
        with self._lock:
            return list(self._queries)

    def await_batch(self, query: StreamingQuery, timeout_s: float = 120.0) -> None:
        """Wait until `query` has finished a micro-batch that started at `now_ms()` or later.

        After `advance`, this is the point where a processing-time trigger has fired and
        its batch (with the timeouts it closed) is done. Raises the query's own error if
        it failed, and QueryTimeout if no such batch finishes within `timeout_s`.
        """
        target = self.now_ms()
        if str(query.id) not in self.query_ids:
            raise QueryClockError(
                f"query {query.name or query.id} does not run on this clock: start it "
                "inside the query_clock block (or the test that uses spark_clock)"
            )
        deadline = time.monotonic() + timeout_s
        while True:
            error = query.exception()
            if error is not None:
                raise error
            if not query.isActive:
                raise QueryClockError(f"query {query.name or query.id} stopped before a batch")
            progress = _last_progress(query)
            if progress is not None and _epoch_ms(progress["timestamp"]) >= target:
                return
            if time.monotonic() > deadline:
                raise QueryTimeout(
                    f"query {query.name or query.id} ran no batch at clock time {target} "
                    f"within {timeout_s:.0f}s ({describe_progress(progress)})",
                    dict(progress) if progress is not None else None,
                )
            time.sleep(0.05)

    def _installed(self, query_id: str) -> None:
        with self._lock:
            self._queries.append(query_id)

    def _failed(self, message: str) -> None:
        with self._lock:
            self._failures.append(message)

    def _raise_failures(self) -> None:
        with self._lock:
            failures = list(self._failures)
        if failures:
            raise QueryClockError(
                "these queries run on the system clock, not the query clock: " + "; ".join(failures)
            )


@contextlib.contextmanager
def query_clock(
    session: SparkSession | None = None, *, start_ms: int | None = None
) -> Iterator[QueryClock]:
    """Queries `session` (default: the active one) starts inside run on a manual clock.

    The clock starts at `start_ms`, by default midnight UTC today: a processing-time
    trigger fires at whole multiples of its interval since the epoch (Spark's
    ProcessingTimeExecutor), and midnight is one for every interval that divides a
    day, so ``advance(seconds=30)`` twice fires a 1-minute trigger exactly at the
    second step, whenever the test runs. It moves only by `advance`. Queries started
    before the block keep the system clock; those started inside keep the manual one
    after it (stop them first if that matters).
    """
    session = _local_session(session)
    jvm = session._jvm
    assert jvm is not None  # a local session has a gateway (_local_session checked)
    start = _midnight_ms() if start_ms is None else int(start_ms)
    if start < 0:
        raise ValueError(f"start_ms must be >= 0, not {start_ms}")
    clock = QueryClock(jvm.org.apache.spark.util.ManualClock(start))
    listener = _clock_installer(session, clock)
    session.streams.addListener(listener)
    try:
        yield clock
    finally:
        session.streams.removeListener(listener)


def _midnight_ms() -> int:
    """Midnight UTC of today, in epoch ms: a multiple of every interval dividing a day."""
    day = 86_400_000
    return time.time_ns() // 1_000_000 // day * day


def _local_session(session: SparkSession | None) -> SparkSession:
    from pyspark.sql import SparkSession

    session = session or SparkSession.getActiveSession()
    if session is None:
        raise QueryClockError("no active SparkSession: start one (or use the spark fixture)")
    if is_connect_session(session):
        raise QueryClockError(
            "a query clock needs a local (classic) SparkSession, and this one is Spark "
            "Connect (--spark-remote, or the warm server that spark_server = auto starts): "
            "its queries run in the server's JVM, which the client cannot reach (no py4j "
            "gateway), and Connect's writeStream has no trigger-clock parameter. Mark the "
            "test @pytest.mark.local_spark to give it a local session in this run, or run "
            "with --spark-remote=off"
        )
    if getattr(session, "_jvm", None) is None:
        raise QueryClockError("this SparkSession has no JVM gateway to hand a clock to")
    return session


def _clock_installer(session: SparkSession, clock: QueryClock) -> Any:
    """A StreamingQueryListener that moves each query it sees starting onto `clock`."""
    from pyspark.sql.streaming import StreamingQueryListener

    jvm = session._jvm
    streams = session._jsparkSession.streams()

    class ClockInstaller(StreamingQueryListener):
        # Runs on the query's thread, before its first batch (see the module docstring).
        def onQueryStarted(self, event: Any) -> None:
            query_id = str(event.id)
            try:
                execution = streams.get(query_id).streamingQuery()
                if _swap_clocks(jvm, execution, clock._manual) == 0:
                    clock._failed(f"{query_id}: no trigger clock found in {execution}")
                else:
                    clock._installed(query_id)
            except Exception as error:  # reported by the clock: a listener's is swallowed
                clock._failed(f"{query_id}: {error}")

        def onQueryProgress(self, event: Any) -> None:
            pass

        def onQueryIdle(self, event: Any) -> None:
            pass

        def onQueryTerminated(self, event: Any) -> None:
            pass

    return ClockInstaller()


def _swap_clocks(jvm: Any, execution: Any, manual: Any) -> int:
    """Set every Clock field of `execution` and of the clock holders it keeps to `manual`.

    Returns how many of the query's own clock fields were set (0: this line keeps its
    clock somewhere this does not look).
    """
    own = 0
    for field in _fields(execution):
        type_name = field.getType().getName()
        if type_name == _CLOCK_TYPE:
            field.setAccessible(True)
            field.set(execution, manual)
            own += 1
        elif type_name.endswith(_CLOCK_HOLDERS):
            field.setAccessible(True)
            holder = field.get(execution)
            if holder is not None:
                for inner in _fields(holder):
                    if inner.getType().getName() == _CLOCK_TYPE:
                        inner.setAccessible(True)
                        inner.set(holder, manual)
    return own


def _fields(obj: Any) -> Iterator[Any]:
    """The declared fields of `obj`'s class and its superclasses (Java reflection)."""
    cls = obj.getClass()
    while cls is not None:
        yield from cls.getDeclaredFields()
        cls = cls.getSuperclass()


def _epoch_ms(timestamp: str) -> int:
    """Epoch milliseconds of a progress timestamp ("2001-09-09T01:46:40.000Z")."""
    moment = datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    return (moment - _EPOCH) // datetime.timedelta(milliseconds=1)


def _last_progress(query: Any) -> dict[str, Any] | None:
    """The query's last progress as plain JSON data.

    Not PySpark's `lastProgress`: on a clock that did not move during a batch, Spark
    leaves the rates out of the progress (rows per second over no time), and PySpark
    4.2's parser then fails with ``KeyError: 'inputRowsPerSecond'``.
    """
    progress = query._jsq.lastProgress()
    return None if progress is None else dict(json.loads(progress.json()))
