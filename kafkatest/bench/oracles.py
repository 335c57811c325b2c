"""What the oracles cost: `assert_invariants` on the payments example against one
uninterrupted run of the same job, side by side in one run.

The job is docs/how-to/oracles.md's (fixtures/jobs/payments.py, found as the demo finds its
job: in the working tree or the checkout); one run is what a test of the job pays
without an oracle: fresh topics, the records seeded, the query run to its end, its sink
read back. The two alternate, so a busy moment of a shared machine falls on both, and
each figure is a median; the three oracles called one by one are timed once beside
them, the cost before they shared runs.
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from kafkatest.brokers.base import Broker

JOB = Path("fixtures") / "jobs" / "payments.py"


def _pay(pid: str, account: str, amount: float, minute: int, second: int) -> dict[str, Any]:
    ts = f"2024-05-01T10:{minute:02d}:{second:02d}Z"
    return {
        "key": account,
        "value": {"payment_id": pid, "account": account, "amount": amount, "ts": ts},
    }


#: docs/how-to/oracles.md's payments: six minutes, p3 and p7 sent twice by their clients.
PAYMENTS = [
    _pay("p1", "acme", 10.0, 0, 5),
    _pay("p2", "bolt", 20.5, 0, 20),
    _pay("p3", "acme", 5.25, 0, 40),
    _pay("p3", "acme", 5.25, 0, 40),
    _pay("p4", "bolt", 7.0, 1, 10),
    _pay("p5", "acme", 1.5, 2, 30),
    _pay("p6", "bolt", 3.0, 3, 15),
    _pay("p7", "acme", 8.0, 4, 0),
    _pay("p7", "acme", 8.0, 4, 0),
    _pay("p8", "bolt", 2.0, 6, 0),
]


def payments_job() -> Callable[..., Any]:
    from kafkatest.apps.demo import find_job
    from kafkatest.jobs import load_job

    path = find_job(None).parent / JOB.name
    return load_job(f"{path}:start_stream")


def one_run(spark: SparkSession, broker: Broker, job: Callable[..., Any]) -> float:
    """Seconds for one uninterrupted test of the job: topics, seed, run, read back."""
    from kafkatest._ground.tempdirs import owned_tempdir, remove
    from kafkatest.oracles.sinks import read_topic
    from kafkatest.seeding import seed
    from kafkatest.spark import wait_for_query

    tag = uuid.uuid4().hex[:8]
    source, sink = f"bench-oracle-in-{tag}", f"bench-oracle-out-{tag}"
    checkpoint = owned_tempdir("kafkatest-bench-oracle-")
    started = time.perf_counter()
    try:
        broker.create_topic(source, partitions=3)
        broker.create_topic(sink, partitions=1)
        seed(broker, source, PAYMENTS, duplicates="allow")
        query = job(
            spark,
            broker.bootstrap_servers,
            source,
            sink,
            str(checkpoint / "c"),
            options={"trigger": "availableNow"},
        )
        wait_for_query(query)
        if not read_topic(broker, sink):
            raise RuntimeError("the payments job wrote nothing: the bench would time nothing")
        return time.perf_counter() - started
    finally:
        remove(checkpoint)
        for topic in (source, sink):
            broker.delete_topic(topic)


def oracle_figures(spark: SparkSession, broker: Broker, runs: int = 3) -> dict[str, float]:
    """`oracles_x`: assert_invariants' seconds over one run's (medians of `runs`, after a
    warm-up of each); `oracles_separately_x`: the three oracles called one by one."""
    from kafkatest.oracles import (
        assert_invariants,
        assert_redelivery_invariant,
        assert_restart_invariant,
        assert_split_invariant,
    )

    job = payments_job()

    def invariants() -> float:
        started = time.perf_counter()
        assert_invariants(job, PAYMENTS, spark=spark, broker=broker)
        return time.perf_counter() - started

    one_run(spark, broker, job)
    invariants()
    singles, shared = [], []
    for _ in range(runs):
        singles.append(one_run(spark, broker, job))
        shared.append(invariants())
    started = time.perf_counter()
    assert_split_invariant(job, PAYMENTS, spark=spark, broker=broker)
    assert_restart_invariant(job, PAYMENTS, spark=spark, broker=broker)
    assert_redelivery_invariant(job, PAYMENTS, spark=spark, broker=broker, lost_acks=False)
    separately = time.perf_counter() - started
    one = statistics.median(singles)
    return {
        "oracle_job_run_s": round(one, 2),
        "oracles_s": round(statistics.median(shared), 2),
        "oracles_x": round(statistics.median(shared) / one, 2),
        "oracles_separately_s": round(separately, 2),
        "oracles_separately_x": round(separately / one, 2),
    }


def oracle_figures_on(
    spark: Any, backend: str, log: Callable[[str], None], runs: int
) -> dict[str, float]:
    """The oracles' cost on the payments example, on a broker of `backend` as a test
    has it (the emulator in this process)."""
    from kafkatest.brokers.registry import start_broker

    with start_broker(backend) as broker:
        figures = oracle_figures(spark, broker, runs)
    log(
        f"  oracles on the payments example: assert_invariants {figures['oracles_s']} s, one "
        f"run of the job {figures['oracle_job_run_s']} s: oracles_x {figures['oracles_x']} "
        f"(target <= 4; the three one by one: {figures['oracles_separately_x']})"
    )
    return figures
