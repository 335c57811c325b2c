"""Hypothesis strategies for the record streams a streaming job meets in production.

Hand-picked inputs test the cases their author thought of. These draw streams with
keys from a small set (so state is shared), event times out of order within a bound,
records late beyond a watermark, exact duplicates (a producer's retry) and poison
values, to feed any of the three oracles inside ``@given``; Hypothesis then shrinks a
failing stream to the smallest it can find and reports it.

    @given(stream=record_streams())
    @oracle_settings()
    def test_dedup(spark, kafka_broker, stream):
        assert_split_invariant(job, stream, spark=spark, broker=kafka_broker, splits=(None, 2))
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import HealthCheck, settings, strategies as st

#: What a drawn record is; the first is what shrinking moves towards.
KINDS = ("event", "late", "duplicate", "poison")
POISON = "{not json"

ValueMaker = Callable[[str, str, float, str], Any]


def payment_value(record_id: str, key: str, amount: float, ts: str) -> dict[str, Any]:
    """The default value: a payment ``{"payment_id", "account", "amount", "ts"}``."""
    return {"payment_id": record_id, "account": key, "amount": amount, "ts": ts}


def record_streams(
    *,
    keys: Sequence[str] = ("a", "b", "c"),
    min_size: int = 1,
    max_size: int = 12,
    start: str = "2024-05-01T10:00:00Z",
    max_step_s: int = 30,
    out_of_order_s: int = 20,
    late_s: int | None = 180,
    duplicates: bool = True,
    poison: bool = False,
    make_value: ValueMaker = payment_value,
) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Streams of record envelopes (``{"key", "value"}``) that `seed` and the oracles take.

    The event clock moves forward by 0 to `max_step_s` seconds per record; each record's
    event time (``ts``, ISO text) lies up to `out_of_order_s` behind the clock, so the
    stream is out of order within that bound. With `late_s`, some records lie `late_s`
    or more behind it: late for a watermark shorter than that. With `duplicates`, some
    records repeat an earlier one exactly; with `poison`, some values are not JSON.
    """
    if not keys:
        raise ValueError("keys: give at least one")
    kinds = ["event"]
    kinds += ["late"] if late_s is not None else []
    kinds += ["duplicate"] if duplicates else []
    kinds += ["poison"] if poison else []
    origin = dt.datetime.fromisoformat(start.replace("Z", "+00:00"))
    draw_one = st.tuples(
        st.sampled_from(kinds),
        st.sampled_from(list(keys)),
        st.integers(0, max_step_s),
        st.integers(0, out_of_order_s),
        st.integers(1, 10_000),
    )

    def build(drawn: list[tuple[str, str, int, int, int]]) -> list[dict[str, Any]]:
        clock = 0
        out: list[dict[str, Any]] = []
        for index, (kind, key, step, behind, cents) in enumerate(drawn):
            clock += step
            if kind == "duplicate" and out:
                out.append(dict(out[cents % len(out)]))
                continue
            if kind == "poison":
                out.append({"key": key, "value": POISON})
                continue
            lag = behind + (late_s or 0) if kind == "late" else behind
            when = origin + dt.timedelta(seconds=clock - lag)
            ts = when.isoformat().replace("+00:00", "Z")
            out.append({"key": key, "value": make_value(f"r{index}", key, cents / 100, ts)})
        return out

    return st.lists(draw_one, min_size=min_size, max_size=max_size).map(build)


def oracle_settings(max_examples: int = 3, **overrides: Any) -> settings:
    """Hypothesis settings for a test that runs an oracle per example.

    Each example runs the job several times, so the budget is a few examples (a test
    stays under a minute), no deadline, and no complaint about the function-scoped
    `spark` and `kafka_broker` fixtures: every example shares the run's one SparkSession.
    """
    return settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        **overrides,
    )
