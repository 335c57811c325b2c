"""Warm mode: a Spark Connect server with the connector that stays up between pytest runs.

Starting Spark is most of what re-running one streaming test costs. `kafkatest
spark-server start` starts a local Spark Connect server once (a detached process:
PySpark's JVM with the Connect plugin and the connector, loopback only) and writes
its pid and port to a state file in kafkatest's cache; while it runs, the `spark`
fixture of every pytest run connects to it instead of starting Spark.

Only its user may use it: it listens on loopback, and on Spark 4.0+ it refuses any
client without the pre-shared key made at its start, which is handed to the server in
its environment and kept in the state file, readable by its owner alone (Spark Connect
3.5 has no authentication: there, any local user can reach the port).

What runs share: the server's JVM (loaded classes, JIT, the connector's jars) and its
executors. What they do not: each run opens its own Connect session (its own temp
views, memory-sink tables and SQL conf), its topics are unique per test, and its
checkpoints live under that run's tmp_path. `stop` ends the JVM; a server whose
process is gone is forgotten at the next look.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kafkatest._ground.tempdirs import boot_id, process_alive
from kafkatest.config import environment
from kafkatest.errors import SetupError

#: The plugin that starts Spark Connect's gRPC service inside a Spark driver.
CONNECT_PLUGIN = "org.apache.spark.sql.connect.SparkConnectPlugin"
#: Spark Connect's own variable for the server's pre-shared key (read by the server's
#: JVM and by PySpark's client): in the environment, not on a command line `ps` shows.
AUTH_TOKEN_VARIABLE = "SPARK_CONNECT_AUTHENTICATE_TOKEN"
START_TIMEOUT_S = 180.0
#: What PySpark's Connect client imports, and the pip package that brings each: the
#: `connect` extra of PySpark (and of kafkatest) installs them all.
CONNECT_CLIENT_MODULES = {
    "grpc": "grpcio",
    "grpc_status": "grpcio-status",
    "google.rpc": "googleapis-common-protos",
    "google.protobuf": "protobuf",
    "pandas": "pandas",
    "pyarrow": "pyarrow",
}


@dataclass(frozen=True)
class ServerState:
    pid: int
    port: int
    log: str
    pyspark: str
    #: Spark modules loaded next to the connector (`spark_extras`: avro, protobuf).
    extras: tuple[str, ...] = ()
    #: The pre-shared key every client must present (Spark Connect 4.0+); empty on
    #: PySpark 3.5, whose Connect server has no authentication.
    token: str = field(default="", repr=False)
    #: The machine's boot the server started in: a state file from before a reboot
    #: names a pid that may since belong to another process.
    boot: str = ""
    #: Minutes without a run after which the server stops itself (0: never; the
    #: servers `spark_server = auto` starts have one, those started by hand not).
    idle_minutes: float = 0.0

    @property
    def address(self) -> str:
        """Where the server listens, for people to read (the token left out)."""
        return f"sc://localhost:{self.port}" if self.token else f"sc://127.0.0.1:{self.port}"

    @property
    def remote(self) -> str:
        """The connection string a client uses: with the token when the server has one
        (PySpark's client then uses gRPC's local credentials, which `localhost` needs)."""
        return f"{self.address}/;token={self.token}" if self.token else self.address


def state_file() -> Path:
    """Where the warm server is recorded: the cache, or $KAFKATEST_SPARK_SERVER_STATE."""
    explicit = environment("KAFKATEST_SPARK_SERVER_STATE")
    if explicit:
        return Path(explicit)
    from kafkatest.jars.maven import cache_dir

    return cache_dir() / "spark-server.json"


def running_server() -> ServerState | None:
    """The warm server, if its process lives and its port answers (else forget it)."""
    path = state_file()
    state = _recorded(path)
    if state is None:
        return None
    if state.boot and state.boot != boot_id():  # the server did not outlive the reboot
        path.unlink(missing_ok=True)
        return None
    if process_alive(state.pid) and _answers(state.port):
        return state
    if not process_alive(state.pid):
        path.unlink(missing_ok=True)
    return None


def used_file() -> Path:
    """Touched by every run that uses the warm server: its last use, for the idle stop."""
    return state_file().with_suffix(".used")


def mark_used() -> None:
    """Note that a run uses the warm server now (a run keeps doing so while it lasts)."""
    with contextlib.suppress(OSError):
        used_file().touch()


def idle_seconds() -> float:
    """Seconds since a run last used the warm server (or since it started)."""
    for path in (used_file(), state_file()):
        with contextlib.suppress(OSError):
            return max(0.0, time.time() - path.stat().st_mtime)
    return 0.0


def usable_server() -> ServerState | None:
    """The warm server, if it runs this environment's PySpark (a Connect client talks
    only to a server of its own version)."""
    import pyspark

    state = running_server()
    return state if state is not None and state.pyspark == pyspark.__version__ else None


def connect_client_refusal(needing: str) -> SetupError | None:
    """The error for an environment without Spark Connect's client (PySpark's
    `connect` extra), naming the install that fixes it; None when it is there.

    PySpark installs without it; its Connect code then fails on its first import of
    grpc or pyarrow, far from the command that needed it. `needing` says what did.
    """
    missing = [package for module, package in CONNECT_CLIENT_MODULES.items() if not _has(module)]
    if not missing:
        return None
    return SetupError(
        f"{needing} needs Spark Connect's client, and {', '.join(missing)} "
        f"{'is' if len(missing) == 1 else 'are'} not installed: "
        'pip install "kafkatest[connect]" (PySpark\'s connect extra)'
    )


def connect_server_conf(port: int) -> dict[str, str]:
    """Spark settings that start Spark Connect's gRPC service in a driver, on loopback
    `port`: its plugin, and the server's jar on the class path where PySpark lacks it
    (3.5's pip package; `kafkatest.jars.spark_connect_server_jars` resolves it)."""
    from kafkatest.jars import spark_connect_server_jars

    conf = {
        "spark.plugins": CONNECT_PLUGIN,
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
    }
    jars = spark_connect_server_jars()
    if jars:
        conf["spark.jars"] = ",".join(str(jar) for jar in jars)
    return conf


def start_server(
    port: int | None = None, extras: Sequence[str] = (), idle_minutes: float = 0.0
) -> ServerState:
    """Start the warm server (or return the one running) and wait until it serves.

    `extras` (the project's `spark_extras`) are loaded into the server: a Connect
    session cannot add Spark modules to a running JVM, so a project's ``from_avro``
    works on the warm server only if it started with spark-avro. Refused without
    Spark Connect's client: no pytest run here could use the server.
    """
    with _one_start_at_a_time():
        return _start(port, extras, idle_minutes)


@contextlib.contextmanager
def _one_start_at_a_time() -> Iterator[None]:
    """Hold the start lock: two runs that find no server at once (pytest-xdist workers
    under `spark_server = auto`) start one, the second then finds it."""
    import fcntl

    path = state_file().with_suffix(".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + START_TIMEOUT_S + 30
    with path.open("a") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise SetupError(
                        f"another process has been starting the warm Spark server for over "
                        f"{START_TIMEOUT_S + 30:.0f}s (lock {path})"
                    ) from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _start(port: int | None, extras: Sequence[str], idle_minutes: float) -> ServerState:
    refusal = connect_client_refusal("warm mode (`kafkatest spark-server start`)")
    if refusal is not None:
        raise refusal
    current = running_server()
    if current is not None:
        refusal = lacking_extras(current, extras)
        if refusal is not None:
            raise refusal
        return current
    from kafkatest.brokers.process import free_port
    from kafkatest.jars import spark_connect_server_jars

    # Here, not in the server's process: a first download (PySpark 3.5's Connect
    # server, 14 MB) shows its progress, and a failure its reason, on this terminal.
    spark_connect_server_jars()
    port = port or free_port()
    log = state_file().with_suffix(".log")
    log.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, AUTH_TOKEN_VARIABLE: secrets.token_urlsafe(32)}
    if extras:
        env["KAFKATEST_SPARK_EXTRAS"] = ",".join(extras)
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "kafkatest.spark.server_process", str(port), str(idle_minutes)],
            env=env,  # the token by the environment: a command line is public to every user
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # outlives the command that started it
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SetupError(f"the Spark Connect server exited at start; see {log}")
            state = running_server()
            if state is not None and state.pid == process.pid:
                mark_used()  # the run that started it is about to use it
                return state
            time.sleep(0.5)
        raise SetupError(
            f"the Spark Connect server did not serve within {START_TIMEOUT_S:.0f}s; see {log}"
        )
    except BaseException:
        # A start that failed, timed out or was interrupted (Ctrl-C) leaves nothing: the
        # server runs in a session of its own, its Spark JVM with it, so end the group.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        state_file().unlink(missing_ok=True)
        raise


def lacking_extras(state: ServerState, wanted: Sequence[str]) -> SetupError | None:
    """The error for a project whose `spark_extras` the warm server was started
    without (a Connect session cannot add them), naming the commands that fix it."""
    missing = sorted(set(wanted) - set(state.extras))
    if not missing:
        return None
    return SetupError(
        f"this project asks for the Spark extras {missing} (spark_extras), and the warm "
        f"Spark server (pid {state.pid}) was started without them: restart it here with "
        "`kafkatest spark-server stop` then `kafkatest spark-server start`, which loads "
        "the project's spark_extras"
    )


def stop_server() -> ServerState | None:
    """Stop the warm server and forget it; returns what was stopped, if anything."""
    path = state_file()
    state = _recorded(path)
    if state is None:
        return None
    if process_alive(state.pid):
        os.kill(state.pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while process_alive(state.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if process_alive(state.pid):
            os.kill(state.pid, signal.SIGKILL)
    path.unlink(missing_ok=True)
    used_file().unlink(missing_ok=True)
    return state


def checks_tokens(pyspark_version: str) -> bool:
    """Whether this line's Connect server refuses a client without its pre-shared key
    (`SPARK_CONNECT_AUTHENTICATE_TOKEN`, Spark 4.0+). Spark Connect 3.5 has no
    authentication: any local user can reach its loopback port."""
    return int(pyspark_version.split(".")[0]) >= 4


def _write_private(path: Path, text: str) -> None:
    """Write the state file readable by its owner only: it holds the server's token."""
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as out:
        out.write(text)
    os.replace(temporary, path)


def _recorded(path: Path) -> ServerState | None:
    """The server the state file records, or None (no file, or not one of ours)."""
    try:
        recorded = json.loads(path.read_text())
        recorded["extras"] = tuple(recorded.get("extras", ()))
        return ServerState(**recorded)
    except (OSError, ValueError, TypeError):
        return None


def _has(module: str) -> bool:
    """Whether `module` can be imported (without importing it; a missing parent
    package, like `google` for `google.rpc`, is a missing module too)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True
