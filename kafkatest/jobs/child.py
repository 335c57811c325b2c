"""Entry point of a job run in its own process: ``python -m kafkatest.jobs.child``.

The job gets its own SparkSession (same connector jars as the tests) so that the
harness can SIGKILL the whole driver at a chosen moment, as a crashed or
preempted driver would die, and start it again from the same checkpoint.
The outcome (finished, or failed with which error) is written to ``--result``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
import time
import traceback
from pathlib import Path

from kafkatest.jobs.contract import load_job
from kafkatest.spark.errors import error_conditions


def _die_with(parent_pid: int) -> None:
    """Kill this job's process group (driver and JVM) once the test process is gone.

    Linux's parent-death signal follows the thread that forked us, which may end
    long before the test does; watching our parent's pid does not.
    """

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="kafkatest-parent-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kafkatest.jobs.child")
    parser.add_argument("--job", required=True, help="module:function or path.py:function")
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--sink", required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--options", default="{}", help="source/job options as JSON")
    parser.add_argument("--result", required=True, help="file to write the outcome to (JSON)")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--parent-pid", type=int, default=None)
    args = parser.parse_args(argv)
    if args.parent_pid is not None:
        _die_with(args.parent_pid)

    from kafkatest.spark.session import kafka_spark_session

    outcome: dict[str, object] = {"status": "finished"}
    try:
        spark = kafka_spark_session(app_name="kafkatest-job", conf={"spark.ui.enabled": "false"})
        job = load_job(args.job)
        query = job(
            spark,
            args.bootstrap,
            args.source,
            args.sink,
            args.checkpoint,
            options=json.loads(args.options),
        )
        if query is not None:
            from kafkatest.spark import wait_for_query

            wait_for_query(query, timeout_s=args.timeout)
    except BaseException as exc:
        outcome = {
            "status": "failed",
            "error_class": type(exc).__name__,
            "error": str(exc),
            "conditions": error_conditions(exc),
            "traceback": traceback.format_exc(),
        }
    Path(args.result).write_text(json.dumps(outcome), encoding="utf-8")
    return 0 if outcome["status"] == "finished" else 1


if __name__ == "__main__":
    raise SystemExit(main())
