"""Fire mutated frames at an emulator in a child process and count what breaks.

The emulator runs as `kafkatest emulator` in a child process (with its protocol
schemas loaded before the first frame, see `child`), so an abort ends that child, not
the run: it is counted as a crash and a fresh emulator takes over.
The corpus includes ListOffsets and Metadata naming a long, truncated log the
emulator starts with (`long_log`); the emulator records every request's timings,
and the report names the slowest request (`slowest_request_ms`, its API).
Workers send one frame at a time per connection and wait up to a second for the
reply (or for the emulator to close the connection, which a malformed request
earns); a probe sends ApiVersions on its own connection every quarter second and
counts a hang whenever no answer comes within a second. Handler failures are the
tracebacks in the emulator's log.

With `sasl`, the emulator listens with SASL_PLAINTEXT (PLAIN and both SCRAMs) and
the frames meet a connection before it is authenticated: the clients' frames
(which such a connection refuses), SaslHandshake, SaslAuthenticate and raw tokens,
intact and mutated; half the connections open with an intact handshake, so mutated
tokens reach each mechanism's exchange too, and some log in and go on.
"""

from __future__ import annotations

import random
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from kafkatest.apps.fuzz.corpus import capture_client_frames
from kafkatest.apps.fuzz.frames import (
    SASL_PASSWORD,
    SASL_USER,
    random_header_frames,
    sasl_frames,
    sasl_handshake_frame,
)
from kafkatest.apps.fuzz.long_log import long_log_frames, slowest_request
from kafkatest.apps.fuzz.mutate import mutate
from kafkatest.brokers.process import free_port, rss_mb, spawn, terminate
from kafkatest.security_names import MECHANISMS as SASL_MECHANISMS

#: ApiVersions v0 from client "probe": answered by any emulator that is alive.
_PROBE = struct.pack(">ihhih", 15, 18, 0, 7, 5) + b"probe"
PROBE_DEADLINE_S = 1.0
REPLY_WAIT_S = 1.0
#: What the emulator of a `sasl` run listens with.
SASL_EMULATOR_ARGS = [
    "--security-protocol",
    "SASL_PLAINTEXT",
    *(arg for mechanism in SASL_MECHANISMS for arg in ("--sasl-mechanism", mechanism)),
    "--user",
    f"{SASL_USER}:{SASL_PASSWORD}",
]


@dataclass
class FuzzReport:
    frames_sent: int = 0
    connections_closed: int = 0
    unanswered: int = 0
    crashes: int = 0
    hangs: int = 0
    handler_exceptions: int = 0
    rss_start_mb: float = 0.0
    rss_end_mb: float = 0.0
    seconds: float = 0.0
    slowest_probe_s: float = 0.0
    #: The longest any request took to be handled (the emulator's own timings), and its
    #: API key: what a client waited, where `slowest_probe_s` is what the others did.
    slowest_request_ms: float = 0.0
    slowest_request_api: int | None = None

    def lines(self) -> list[str]:
        return [f"{name}: {value}" for name, value in asdict(self).items()]


class _Emulator:
    """`kafkatest emulator` as a child, restarted after a crash; logs kept."""

    def __init__(self, workdir: Path, acls: bool = False, sasl: bool = False) -> None:
        self.workdir = workdir
        self.acls = acls
        self.sasl = sasl
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.logs: list[Path] = []

    def start(self) -> None:
        self.port = free_port()
        log = self.workdir / f"emulator-{len(self.logs)}.log"
        self.logs.append(log)
        # The child loads every protocol schema first (see child.py), so RSS compares.
        command = [sys.executable, "-m", "kafkatest.apps.fuzz.child", "--port", str(self.port)]
        if self.acls:
            command.append("--fuzz-acls")
        if self.sasl:
            command += SASL_EMULATOR_ARGS
        self.process = spawn(command, log, self.workdir)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if _probe(self.port):
                return
            time.sleep(0.05)
        raise RuntimeError(f"the emulator did not start; see {log}")

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def rss_mb(self) -> float:
        assert self.process is not None
        return rss_mb(self.process.pid)

    def slowest_request(self) -> tuple[float, int | None]:
        """(ms, API key) of the longest-handled request of every emulator run so far."""
        found = [slowest_request(log.read_text(errors="replace")) for log in self.logs]
        return max(found, default=(0.0, None), key=lambda pair: pair[0])

    def tracebacks(self) -> int:
        return sum(
            log.read_text(errors="replace").count("Traceback (most recent call last)")
            for log in self.logs
            if log.exists()
        )

    def close(self) -> None:
        if self.process is not None:
            terminate(self.process)


def _probe(port: int, deadline_s: float = PROBE_DEADLINE_S) -> bool:
    """Whether ApiVersions is answered within `deadline_s`."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=deadline_s) as sock:
            sock.sendall(_PROBE)
            return len(sock.recv(8)) >= 8
    except OSError:
        return False


def run_fuzz(
    frames: int = 1_000_000,
    connections: int = 16,
    seed: int = 0,
    workdir: Path | None = None,
    log: object = None,
    max_seconds: float = float("inf"),
    acls: bool = False,
    sasl: bool = False,
    probe_deadline_s: float = PROBE_DEADLINE_S,
) -> FuzzReport:
    """Send `frames` mutated frames over `connections` parallel connections.

    Stops early after `max_seconds` (the report says how many frames went out). With
    `acls`, the emulator authorizes every request and allows the corpus's client part
    of what it recorded (see `child`), so the authorization layer takes the frames too.
    With `sasl`, the frames meet a SASL listener before authentication (see above).
    A hang is a probe unanswered within `probe_deadline_s`: a test on a machine busy
    with other work gives it seconds (a stuck loop still misses any deadline), and the
    report's `slowest_probe_s` shows how close the answers came.
    """
    report = FuzzReport()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kafkatest-fuzz-") as scratch:
        emulator = _Emulator(workdir or Path(scratch), acls, sasl)
        emulator.start()
        try:
            rng = random.Random(seed)
            corpus = capture_client_frames() + long_log_frames()
            corpus += random_header_frames(rng, max(200, len(corpus) // 2))
            if sasl:
                # As many SASL frames as all the others, so most connections reach it.
                handshake = sasl_frames()
                corpus += handshake * max(1, len(corpus) // len(handshake))
            report.rss_start_mb = emulator.rss_mb()
            _fire(
                emulator,
                corpus,
                frames,
                connections,
                seed,
                report,
                log,
                max_seconds,
                probe_deadline_s,
            )
            # Let the emulator settle (closed connections, freed buffers) before the figure.
            time.sleep(1.0)
            report.rss_end_mb = emulator.rss_mb() if emulator.alive else float("nan")
            report.handler_exceptions = emulator.tracebacks()
        finally:
            emulator.close()
        report.slowest_request_ms, report.slowest_request_api = emulator.slowest_request()
    report.seconds = round(time.monotonic() - started, 1)
    return report


def _fire(
    emulator: _Emulator,
    corpus: list[bytes],
    frames: int,
    connections: int,
    seed: int,
    report: FuzzReport,
    log: object,
    max_seconds: float,
    probe_deadline_s: float = PROBE_DEADLINE_S,
) -> None:
    lock = threading.Lock()
    remaining = [frames]
    deadline = time.monotonic() + max_seconds
    stop = threading.Event()
    restarting = threading.Lock()

    def take() -> bool:
        with lock:
            if remaining[0] <= 0 or time.monotonic() > deadline:
                return False
            remaining[0] -= 1
            report.frames_sent += 1
            return True

    def count(field: str) -> None:
        with lock:
            setattr(report, field, getattr(report, field) + 1)

    def ensure_alive() -> None:
        with restarting:
            if not emulator.alive and not stop.is_set():
                count("crashes")
                emulator.start()

    def worker(index: int) -> None:
        rng = random.Random(seed * 1000 + index)
        sock: socket.socket | None = None
        while take():
            seed_frame = rng.choice(corpus)
            # Some frames go out intact, so connections live on and handlers run.
            frame = seed_frame if rng.random() < 0.25 else mutate(rng, seed_frame, corpus)
            try:
                if sock is None:
                    sock = socket.create_connection(("127.0.0.1", emulator.port), timeout=5)
                    sock.settimeout(REPLY_WAIT_S)
                    if emulator.sasl and rng.random() < 0.5:
                        mechanism = rng.choice(SASL_MECHANISMS)
                        sock.sendall(sasl_handshake_frame(mechanism, rng.randint(0, 1)))
                        if not sock.recv(65536):
                            raise ConnectionResetError
                sock.sendall(frame)
                if not sock.recv(65536):
                    raise ConnectionResetError
            except TimeoutError:
                count("unanswered")  # a request may legitimately wait (acks=0, long poll)
                _drop(sock)
                sock = None
            except OSError:
                count("connections_closed")
                _drop(sock)
                sock = None
                if not emulator.alive:
                    ensure_alive()
        _drop(sock)

    def prober() -> None:
        while not stop.wait(0.25):
            if not emulator.alive:
                ensure_alive()
                continue
            asked = time.monotonic()
            answered = _probe(emulator.port, probe_deadline_s)
            with lock:
                report.slowest_probe_s = max(
                    report.slowest_probe_s, round(time.monotonic() - asked, 3)
                )
            if not answered and emulator.alive:
                count("hangs")

    def progress() -> None:
        while not stop.wait(10):
            if callable(log):
                log(
                    f"  {report.frames_sent:,} frames, {report.crashes} crashes, "
                    f"{report.hangs} hangs, rss {emulator.rss_mb() if emulator.alive else '-'} MB"
                )

    workers = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(connections)]
    helpers = [
        threading.Thread(target=prober, daemon=True),
        threading.Thread(target=progress, daemon=True),
    ]
    for thread in workers + helpers:
        thread.start()
    for thread in workers:
        thread.join()
    stop.set()
    for thread in helpers:
        thread.join()
    if not emulator.alive:
        count("crashes")


def _drop(sock: socket.socket | None) -> None:
    if sock is not None:
        sock.close()
    return None
