"""The warm Spark Connect server's own process (`kafkatest spark-server start` runs
``python -m kafkatest.spark.server_process PORT IDLE_MINUTES``, detached).

It starts Spark with the Connect plugin, records itself in the state file (readable by
its owner alone: it holds the pre-shared key) and serves until SIGTERM or, with an
idle time, until no run has used it for that long. Finding, starting and stopping it
from another process is `kafkatest.spark.server`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from dataclasses import asdict

from kafkatest._ground.tempdirs import boot_id
from kafkatest.spark.server import (
    AUTH_TOKEN_VARIABLE,
    ServerState,
    _write_private,
    checks_tokens,
    connect_server_conf,
    idle_seconds,
    state_file,
    used_file,
)

#: The warm server outlives the brokers of the runs it serves (each run's emulator is
#: gone when the run ends), while the connector caches a job's Kafka producers and
#: consumers for 10 and 5 minutes: each run left clients that kept reconnecting to a
#: closed port, in the server's log and on its CPU. Closed after a minute unused here;
#: a job of a run reuses them as before (its triggers come well within that).
WARM_SERVER_CLIENT_CACHE: dict[str, str] = {
    "spark.kafka.producer.cache.timeout": "60s",
    "spark.kafka.producer.cache.evictorThreadRunInterval": "15s",
    "spark.kafka.consumer.cache.timeout": "60s",
    "spark.kafka.consumer.cache.evictorThreadRunInterval": "15s",
}


def _serve(port: int, idle_minutes: float = 0.0) -> None:
    """The server process: Spark with the Connect plugin until SIGTERM, or until no run
    has used it for `idle_minutes` (when given)."""
    import pyspark

    from kafkatest.spark.session import kafka_spark_session, stop_spark_session

    session = kafka_spark_session(
        app_name="kafkatest-spark-server",
        conf={**connect_server_conf(port), **WARM_SERVER_CLIENT_CACHE},
    )
    # Blocked only now, so the JVM (started above) keeps its own signal handling.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    from kafkatest.jars.resolve import requested_spark_extras

    state = ServerState(
        os.getpid(),
        port,
        str(state_file().with_suffix(".log")),
        pyspark.__version__,
        tuple(requested_spark_extras()),
        token=os.environ.get(AUTH_TOKEN_VARIABLE, "") if checks_tokens(pyspark.__version__) else "",
        boot=boot_id(),
        idle_minutes=idle_minutes,
    )
    used_file().unlink(missing_ok=True)
    _write_private(state_file(), json.dumps(asdict(state)))
    print(f"kafkatest spark-server: {_until(idle_minutes)}", flush=True)
    signals = {signal.SIGTERM, signal.SIGINT}
    if idle_minutes <= 0:
        stopping = f"signal {signal.sigwait(signals)}"
    else:
        # Looked at often enough that the stop comes within a tenth of the idle time.
        every = min(60.0, max(0.5, idle_minutes * 6))
        while True:
            received = signal.sigtimedwait(signals, every)
            if received is not None:
                stopping = f"signal {received.si_signo}"
                break
            if idle_seconds() > idle_minutes * 60:
                stopping = f"unused for {idle_minutes:g} minutes"
                break
    print(f"kafkatest spark-server: {stopping}, stopping", flush=True)
    stop_spark_session(session)
    state_file().unlink(missing_ok=True)
    used_file().unlink(missing_ok=True)


def _until(idle_minutes: float) -> str:
    if idle_minutes > 0:
        return f"serving until unused for {idle_minutes:g} minutes, or stopped"
    return "serving until stopped (kafkatest spark-server stop)"


if __name__ == "__main__":
    _serve(int(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 0.0)
