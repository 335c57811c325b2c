"""`--spark-master standalone[W]`: a Spark standalone cluster that kafkatest starts.

A master and W workers from the installed PySpark's own jars (no separate Spark
download), on loopback, each a JVM tied to this process's lifetime; executors are
launched by the workers as on a real standalone cluster, and the connector's jars
reach them from the driver (`spark.jars`). Readiness is read from the master's log
("Registering worker"), so nothing polls its web UI, whose kill links are off.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from kafkatest._ground import tempdirs
from kafkatest.brokers import process
from kafkatest.errors import SetupError

#: Memory each worker offers; the spark fixture asks 1g per executor.
WORKER_MEMORY_MB = 1536
EXECUTOR_MEMORY = "1g"


class StandaloneCluster:
    """A master and `workers` workers of `cores` cores each; `master_url` once started."""

    def __init__(self, workers: int, cores: int = 1, startup_timeout_s: float = 120.0) -> None:
        if not 1 <= workers <= 8:
            raise SetupError(f"standalone[{workers}]: give 1 to 8 workers")
        self.workers = workers
        self.cores = cores
        self.startup_timeout_s = startup_timeout_s
        self.master_url: str | None = None
        self._workdir: Path | None = None
        self._processes: list[subprocess.Popen[bytes]] = []

    @property
    def session_conf(self) -> dict[str, str]:
        """What the driver needs: executors that fit the workers, every core used."""
        return {
            "spark.executor.memory": EXECUTOR_MEMORY,
            "spark.executor.cores": str(self.cores),
            "spark.cores.max": str(self.workers * self.cores),
        }

    def start(self) -> str:
        java = shutil.which("java")
        if java is None:
            raise SetupError("a Spark standalone cluster runs on the JVM: install JDK 17+")
        from pyspark.find_spark_home import _find_spark_home

        spark_home = Path(_find_spark_home())
        self._workdir = tempdirs.owned_tempdir("kafkatest-spark-standalone-")
        env = {
            "SPARK_HOME": str(spark_home),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
            # The worker's launcher asks for it; pip's PySpark has no build dirs to find it in.
            "SPARK_SCALA_VERSION": _scala_version(spark_home),
        }
        classpath = f"{spark_home / 'jars'}/*"
        port = process.free_port()
        try:
            self._spawn(
                env,
                "master",
                [java, "-Xmx256m", "-cp", classpath, "-Dspark.ui.killEnabled=false"],
                ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1"],
                ["--port", str(port), "--webui-port", str(process.free_port())],
            )
            url = f"spark://127.0.0.1:{port}"
            self._wait_for("master", "I have been elected leader", 1)
            for index in range(self.workers):
                self._spawn(
                    env,
                    f"worker-{index}",
                    [java, "-Xmx256m", "-cp", classpath, "-Dspark.ui.killEnabled=false"],
                    ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1"],
                    ["--webui-port", str(process.free_port()), "--cores", str(self.cores)],
                    ["--memory", f"{WORKER_MEMORY_MB}m"],
                    ["--work-dir", str(self._workdir / f"work-{index}"), url],
                )
            self._wait_for("master", "Registering worker", self.workers)
        except BaseException:
            self.close()
            raise
        self.master_url = url
        return url

    def close(self) -> None:
        """Stop workers (and the executors they launched), then the master."""
        for running in reversed(self._processes):
            process.terminate(running)
        self._processes = []
        if self._workdir is not None:
            tempdirs.remove(self._workdir)
            self._workdir = None
        self.master_url = None

    def _spawn(self, env: dict[str, str], name: str, *parts: list[str]) -> None:
        assert self._workdir is not None
        command = [item for part in parts for item in part]
        log = self._workdir / f"{name}.log"
        self._processes.append(process.spawn(command, log, self._workdir, env))

    def _wait_for(self, name: str, line: str, count: int) -> None:
        assert self._workdir is not None
        log = self._workdir / f"{name}.log"
        deadline = time.monotonic() + self.startup_timeout_s
        while True:
            text = log.read_text(errors="replace") if log.exists() else ""
            if text.count(line) >= count:
                return
            dead = [p for p in self._processes if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                why = "a JVM exited" if dead else f"not within {self.startup_timeout_s:.0f}s"
                raise SetupError(
                    f"the Spark standalone cluster did not start ({why}): waiting for "
                    f"{count} x {line!r} in {log}\n{process.tail(log)}"
                )
            time.sleep(0.2)


def _scala_version(spark_home: Path) -> str:
    """2.13 or 2.12, from the scala-library jar PySpark ships."""
    for jar in (spark_home / "jars").glob("scala-library-*.jar"):
        return ".".join(jar.stem.removeprefix("scala-library-").split(".")[:2])
    raise SetupError(
        f"no scala-library jar under {spark_home / 'jars'}: is PySpark installed whole?"
    )
