"""The catch matrix: every job of the corpus (tests/oracles/corpus), correct and with
the bugs that reach production, through `assert_invariants`. Each correct job passes
all three oracles and writes rows; each bug fails exactly the oracles the matrix
says (docs/how-to/oracles.md shows the same table). On classic Spark and over Spark Connect
on the emulator; the shapes marked for it also on real Kafka. The state column:
every job through `assert_state_bounded` on its shape's stream, on classic Spark
(tests/state runs the oracle over Spark Connect and on real Kafka).

What a run covers: on classic Spark every correct job and every bug but the few of a
kind another shape's bug already shows (CI_SKIPS_CLASSIC); over Spark Connect, in the
state column and on real Kafka, the cases CI_CASES names
(where those columns can differ from classic Spark's: the plan read over Connect, state
that grows or levels off, a broker's own delivery), unless `--catch-matrix=full` asks
for every case in every column (`nox -s catch_matrix`: about 30 minutes alone here;
the figures in docs/how-to/oracles.md are from such a run)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from corpus.matrix import ORACLES, Case, cases
from pyspark.sql import SparkSession

from kafkatest import Broker
from kafkatest.oracles import (
    InvariantsReport,
    OracleAssertionError,
    StateAssertionError,
    StateReport,
    assert_invariants,
    assert_state_bounded,
)
from kafkatest.state import session_conf

#: Batches of the state column's runs: a warm-up of 3, then 3 judged (every corpus
#: stream's horizon is one or two batches).
STATE_BATCHES = 6


SESSIONIZER = "session windows (a click sessionizer)"
WORD_COUNT = "complete mode (Spark's word count)"
#: The cases a run leaves out of classic Spark's column unless --catch-matrix=full: a
#: bug of a kind another shape's bug already shows to the same oracles (every correct
#: job stays: a false alarm shows on its own job only).
CI_SKIPS_CLASSIC = (
    "sliding windows / non-deterministic key",  # as the stateless job's
    "dropDuplicates / per-batch state",  # as the tumbling windows' and the sessionizer's
    "update mode (applyInPandasWithState) / per-batch state",
    "stream-static join / append without batch id",  # as foreachBatch upsert's
    "transformWithStateInPandas with timers / per-batch state",
)
#: The cases run outside classic Spark's column unless --catch-matrix=full, by column.
CI_CASES: dict[str, tuple[str, ...]] = {
    # Over Connect the oracles read the plan from its string: the watermark, the output
    # mode and the dedup keys.
    "test_spark_connect": (
        f"{SESSIONIZER} / correct",
        f"{SESSIONIZER} / per-batch state",
        f"{WORD_COUNT} / correct",
    ),
    # Each state verdict (levelling off: tests/state's examples), and each bug only the
    # state column catches.
    "test_bounded_state": (
        "stateless map/filter / correct",
        "dropDuplicates / correct",
        "dropDuplicatesWithinWatermark / a watermark the dedup cannot use",
        "stream-stream join / a join without watermark on one side",
    ),
    "test_real_kafka": (
        f"{SESSIONIZER} / correct",
        f"{SESSIONIZER} / per-batch state",
        f"{WORD_COUNT} / correct",
    ),
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each column's cases: all of them on classic Spark, CI_CASES's elsewhere."""
    if "case" not in metafunc.fixturenames:
        return
    name = metafunc.function.__name__
    chosen = cases(kafka_only=name == "test_real_kafka")
    if metafunc.config.getoption("--catch-matrix") != "full":
        if name in CI_CASES:
            chosen = [case for case in chosen if case.id in CI_CASES[name]]
        elif name == "test_classic_spark":
            chosen = [case for case in chosen if case.id not in CI_SKIPS_CLASSIC]
    metafunc.parametrize("case", chosen, ids=lambda c: c.id)


@pytest.fixture(scope="module")
def connect_spark(spark_session: SparkSession) -> Iterator[SparkSession]:
    """A Spark Connect session on the run's own Spark (no second JVM)."""
    from kafkatest.spark.connect import connect_session_beside, stop_connect_beside

    session = connect_session_beside(spark_session)
    yield session
    stop_connect_beside(session)


def verdicts(case: Case, spark: SparkSession, broker: Broker) -> tuple[tuple[str, ...], Any]:
    """The oracles that fail the case's job, and the report."""
    unavailable = case.shape.unavailable()
    if unavailable:
        pytest.skip(unavailable)
    from kafkatest.spark.connect import api_of

    with session_conf(spark, dict(case.shape.spark_conf)), api_of(spark):
        try:
            report: InvariantsReport = assert_invariants(
                case.job, case.shape.records, spark=spark, broker=broker, **case.options()
            )
        except OracleAssertionError as failed:
            report = failed.report
    failing = tuple(name for name, one in zip(ORACLES, report.reports, strict=True) if not one.ok)
    return failing, report


def check(case: Case, spark: SparkSession, broker: Broker) -> None:
    failing, report = verdicts(case, spark, broker)
    assert failing == case.expected, f"{case.id}: failed {failing}, not {case.expected}\n{report}"
    if case.bug is None:
        assert report.runs[0].rows, f"{case.id}: the job wrote nothing, which proves nothing"
    if case.bug is None and case.options().get("allow_late"):  # in the plan, classic or Connect
        assert report.runs[0].watermark_column, f"{case.id}: no watermark column found"


@pytest.mark.kafka_backends("emulator")
def test_classic_spark(case: Case, spark: SparkSession, kafka_broker: Broker) -> None:
    check(case, spark, kafka_broker)


@pytest.mark.kafka_backends("emulator")
def test_spark_connect(case: Case, connect_spark: SparkSession, kafka_broker: Broker) -> None:
    check(case, connect_spark, kafka_broker)


def state_verdict(case: Case, spark: SparkSession, broker: Broker) -> tuple[str, StateReport]:
    """What the bounded-state oracle says of the case's job on its shape's stream."""
    unavailable = case.shape.unavailable()
    if unavailable:
        pytest.skip(unavailable)
    from kafkatest.spark.connect import api_of

    with session_conf(spark, dict(case.shape.spark_conf)), api_of(spark):
        try:
            report = assert_state_bounded(
                case.job,
                case.shape.stream,
                spark=spark,
                broker=broker,
                batches=STATE_BATCHES,
                **case.options(),
            )
        except StateAssertionError as failed:
            return "grows", failed.report
    return ("no state" if report.not_applicable else "passes"), report


@pytest.mark.kafka_backends("emulator")
def test_bounded_state(case: Case, spark: SparkSession, kafka_broker: Broker) -> None:
    verdict, report = state_verdict(case, spark, kafka_broker)
    assert verdict == case.state, f"{case.id}: state {verdict}, not {case.state}\n{report}"


@pytest.mark.kafka_backends("kafka")
def test_real_kafka(case: Case, spark: SparkSession, kafka_broker: Broker) -> None:
    check(case, spark, kafka_broker)


def test_the_ci_cases_are_cases_of_their_column() -> None:
    """A renamed shape or bug must not drop a case from CI without a word."""
    known_classic = {c.id for c in cases()}
    assert set(CI_SKIPS_CLASSIC) <= known_classic, set(CI_SKIPS_CLASSIC) - known_classic
    assert not any(c.endswith("/ correct") for c in CI_SKIPS_CLASSIC)
    for column, ids in CI_CASES.items():
        known = {c.id for c in cases(kafka_only=column == "test_real_kafka")}
        assert set(ids) <= known, f"{column}: no such case {set(ids) - known}"


def test_a_third_of_the_corpus_runs_on_real_kafka() -> None:
    shapes = {c.shape.name for c in cases()}
    on_kafka = {c.shape.name for c in cases(kafka_only=True)}
    assert len(shapes) >= 12 and len(on_kafka) * 3 >= len(shapes)
    kinds = {c.bug.kind for c in cases() if c.bug}
    assert kinds >= {
        "per-batch state",
        "append without batch id",
        "non-deterministic key",
        "processing time instead of event time",
        "a join without watermark on one side",
        "a dedup key missing a field",
    }
