"""A job under test in its own process group, killable with SIGKILL and restartable.

Nothing may outlive the test: the child runs in a new session (its JVM joins the
child's process group, so one killpg takes both), kills its own group when the
test process dies (it watches its parent), and every live job is killed when
its run ends, at interpreter exit, and when the scenario run fails.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kafkatest._ground.tempdirs import owned_tempdir
from kafkatest.brokers.process import tail

_LIVE: set[JobProcess] = set()
_LIVE_LOCK = threading.Lock()


@dataclass(frozen=True)
class JobOutcome:
    """How one run of a job process ended."""

    status: str  # finished | failed | killed | timeout
    error_class: str = ""
    error: str = ""
    log_tail: str = ""
    conditions: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return self.status == "failed"


class JobProcess:
    """One job (``module:function``) run by ``python -m kafkatest.jobs.child``."""

    def __init__(
        self,
        job: str,
        bootstrap: str,
        source: str,
        sink: str,
        checkpoint: str | Path,
        options: Mapping[str, str] | None = None,
        timeout_s: float = 300.0,
    ) -> None:
        self.job = job
        self.bootstrap = bootstrap
        self.source = source
        self.sink = sink
        self.checkpoint = str(checkpoint)
        self.options = dict(options or {})
        self.timeout_s = timeout_s
        self.runs = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._workdir = owned_tempdir("kafkatest-job-")
        self._killed = False

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def start(self) -> JobProcess:
        """Start a run (the first, or a restart from the same checkpoint)."""
        if self.running():
            raise RuntimeError(f"job {self.job} is already running (pid {self.pid})")
        self.runs += 1
        self._killed = False
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        log = (self._workdir / f"run-{self.runs}.log").open("wb")
        request = {
            "job": self.job,
            "bootstrap": self.bootstrap,
            "source": self.source,
            "sink": self.sink,
            "checkpoint": self.checkpoint,
            "options": self.options,
            "result": str(self._result_path()),
            "timeout_s": self.timeout_s,
            "parent_pid": os.getpid(),
        }
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "kafkatest.jobs.child", json.dumps(request)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        log.close()
        with _LIVE_LOCK:
            _LIVE.add(self)
        return self

    def _result_path(self) -> Path:
        return self._workdir / f"run-{self.runs}.json"

    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def kill(self) -> None:
        """SIGKILL the job's whole process group (Python driver and its JVM)."""
        if self._proc is None:
            return
        self._killed = self._killed or self.running()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=30)
        # The driver is reaped above, but its JVM (reparented away from us) dies on its
        # own time: tearing down a large process takes a while on a loaded machine, and
        # until it is gone it still holds its ports and memory.
        _wait_until_gone(self._proc.pid, timeout_s=30)
        with _LIVE_LOCK:
            _LIVE.discard(self)

    def wait(self, timeout_s: float | None = None) -> JobOutcome:
        """Wait for the current run to end; kill it and say so after `timeout_s`."""
        if self._proc is None:
            raise RuntimeError("the job was never started")
        try:
            self._proc.wait(timeout=timeout_s or self.timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            return JobOutcome("timeout", log_tail=self.log_tail())
        self.kill()  # reaps any JVM left in the group
        return self.outcome()

    def outcome(self) -> JobOutcome:
        if self._killed:
            return JobOutcome("killed", log_tail=self.log_tail())
        try:
            data = json.loads(self._result_path().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return JobOutcome("failed", "ProcessDied", "no outcome written", self.log_tail())
        return JobOutcome(
            str(data.get("status")),
            str(data.get("error_class", "")),
            str(data.get("error", "")),
            self.log_tail(),
            tuple(data.get("conditions", ())),
        )

    def log_tail(self, lines: int = 40) -> str:
        return tail(self._workdir / f"run-{self.runs}.log", lines)

    def close(self) -> None:
        self.kill()

    def __enter__(self) -> JobProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def kill_all_jobs() -> None:
    """Kill every job process this interpreter started and has not reaped."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for job in live:
        job.kill()


def _wait_until_gone(group: int, timeout_s: float) -> None:
    """Wait until no process of `group` runs any more (at most `timeout_s`)."""
    deadline = time.monotonic() + timeout_s
    while live_members(group) and time.monotonic() < deadline:
        time.sleep(0.02)


def live_members(group: int) -> list[int]:
    """Pids of processes in process group `group` that still run (zombies do not count).

    A killed driver's JVM is reparented to pid 1, which in some containers never
    reaps it: it stays a zombie, dead but visible to ``kill(pid, 0)``.
    """
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        state, pgrp = fields[0], int(fields[2])
        if pgrp == group and state not in ("Z", "X"):
            members.append(int(entry.name))
    return members


atexit.register(kill_all_jobs)
