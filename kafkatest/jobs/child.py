"""Entry point of a job run in its own process: ``python -m kafkatest.jobs.child``.

The job gets its own SparkSession (same connector jars as the tests) so that the
harness can SIGKILL the whole driver at a chosen moment, as a crashed or
preempted driver would die, and start it again from the same checkpoint.
The outcome (finished, or failed with which error) is written to the ``result`` file.
"""

from __future__ import annotations

import json
import os
import signal
import sys
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
    """Run the job `JobProcess` asks for: one JSON argument, the job's ``job``,
    ``bootstrap``, ``source``, ``sink``, ``checkpoint``, ``options``, the ``result`` file,
    ``timeout_s`` and the ``parent_pid`` to die with."""
    request = json.loads((sys.argv[1:] if argv is None else argv)[0])
    _die_with(int(request["parent_pid"]))

    from kafkatest.spark.session import kafka_spark_session

    outcome: dict[str, object] = {"status": "finished"}
    try:
        spark = kafka_spark_session(app_name="kafkatest-job", conf={"spark.ui.enabled": "false"})
        job = load_job(request["job"])
        query = job(
            spark,
            request["bootstrap"],
            request["source"],
            request["sink"],
            request["checkpoint"],
            options=request["options"],
        )
        if query is not None:
            from kafkatest.spark import wait_for_query

            wait_for_query(query, timeout_s=float(request["timeout_s"]))
    except BaseException as exc:
        outcome = {
            "status": "failed",
            "error_class": type(exc).__name__,
            "error": str(exc),
            "conditions": error_conditions(exc),
            "traceback": traceback.format_exc(),
        }
    Path(request["result"]).write_text(json.dumps(outcome), encoding="utf-8")
    return 0 if outcome["status"] == "finished" else 1


if __name__ == "__main__":
    raise SystemExit(main())
