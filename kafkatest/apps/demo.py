"""`kafkatest demo`: the whole loop a user's test does, narrated, in one command.

Starts the default broker, seeds a topic with faker-generated orders (plus a record
that is not an order), runs the sample job from fixtures/jobs under local Spark with
the real connector, and checks the sink with the at-least-once assertion.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from kafkatest.brokers.registry import default_backend, start_broker
from kafkatest.errors import SetupError
from kafkatest.records import Record

if TYPE_CHECKING:
    from kafkatest.seeding.fake import Provider

JOB_RELATIVE = Path("fixtures") / "jobs" / "orders_enrichment.py"

ORDER_SCHEMA: dict[str, Provider] = {
    "order_id": "uuid4",
    "customer": "name",
    "amount": ("pyfloat", {"min_value": 1, "max_value": 500, "right_digits": 2}),
    "currency": ("random_element", {"elements": ["EUR", "USD", "GBP"]}),
}


def find_job(path: str | None) -> Path:
    """The sample job: an explicit path, else fixtures/ in the working tree or checkout."""
    candidates = (
        [Path(path)]
        if path
        else [
            Path.cwd() / JOB_RELATIVE,
            Path(__file__).resolve().parents[2]
            / JOB_RELATIVE,  # the checkout, above kafkatest/apps/
        ]
    )
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise SetupError(
        f"the demo job was not found (looked at {', '.join(map(str, candidates))}); run the "
        "demo from a kafkatest checkout or pass --job PATH"
    )


def load_job(path: Path) -> ModuleType:
    # Jobs import their siblings (as a downstream repo's jobs package would).
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location("kafkatest_demo_job", path)
    if spec is None or spec.loader is None:
        raise SetupError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def step(text: str) -> Iterator[None]:
    """One line per step, printed when it is done: Spark's own start-up chatter on
    stderr would otherwise split a half-printed line."""
    started = time.monotonic()
    yield
    print(f"  {text}: {time.monotonic() - started:.2f}s", flush=True)


def run_demo(backend: str | None = None, records: int = 1000, job_path: str | None = None) -> int:
    """Run the demo; 0 when the sink holds every order at least once, 1 when not."""
    from kafkatest.assertions import DeliveryAssertionError, assert_at_least_once
    from kafkatest.seeding import fake_values, seed
    from kafkatest.sinks import topic_rows
    from kafkatest.spark import kafka_spark_session, stop_spark_session, wait_for_query

    # librdkafka's retry chatter (e.g. while real Kafka loads its coordinator) is noise here.
    logging.getLogger("kafkatest.librdkafka").setLevel(logging.ERROR)
    backend = backend or default_backend()
    job = load_job(find_job(job_path))
    print(
        f"kafkatest demo: {records} orders through {find_job(job_path).name} on the {backend!r} broker"
    )
    with tempfile.TemporaryDirectory(prefix="kafkatest-demo-") as scratch:
        with step(f"starting the {backend} broker"):
            broker = start_broker(backend)
        spark = None
        try:
            with step("creating topics orders (3 partitions) and orders-enriched"):
                broker.create_topic("orders", partitions=3)
                broker.create_topic("orders-enriched", partitions=3)
            with step(f"seeding {records} faker orders keyed by order_id, and one non-order"):
                orders = fake_values(ORDER_SCHEMA, records, seed=7)
                envelopes = [
                    {
                        "key": o["order_id"],
                        "value": o,
                        "headers": {"source": ("web", "mobile")[i % 2]},
                    }
                    for i, o in enumerate(orders)
                ]
                seeded = seed(broker, "orders", envelopes)
                # Not an order: the job must drop it, so it is not part of what we expect.
                broker.produce([Record.make("orders", b"{not json", key="junk")])
            with step("starting Spark with the Kafka connector"):
                spark = kafka_spark_session(app_name="kafkatest-demo")
            with step("running the job (streaming, Trigger.AvailableNow)"):
                query = job.start_stream(
                    spark,
                    broker.bootstrap_servers,
                    "orders",
                    "orders-enriched",
                    f"{scratch}/checkpoint",
                )
                wait_for_query(query, timeout_s=300)
            with step("reading the sink topic"):
                rows = topic_rows(broker, "orders-enriched")
            try:
                report = assert_at_least_once(seeded, rows, ignore=["value", "key", "headers"])
                outcome = 0
            except DeliveryAssertionError as failure:
                report = failure.report
                outcome = 1
            print()
            print(report.message())
            sample = rows[0]["value"] if rows else None
            print(f"\n  a sink record: {sample}")
            print(f"\nresult: {'OK' if outcome == 0 else 'FAILED'}")
            return outcome
        except KeyboardInterrupt:
            # Ctrl-C: the interrupt is the outcome; a py4j error while stopping Spark
            # after it must not replace it.
            if spark is not None:
                with contextlib.suppress(Exception):
                    stop_spark_session(spark)
                spark = None
            raise
        finally:
            if spark is not None:
                stop_spark_session(spark)
            broker.close()


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="kafkatest demo", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", default=None, help=f"broker backend (default {default_backend()})"
    )
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--job", default=None, help="path of the job module to run")
    args = parser.parse_args(argv)
    return run_demo(args.backend, args.records, args.job)


if __name__ == "__main__":
    sys.exit(main())
