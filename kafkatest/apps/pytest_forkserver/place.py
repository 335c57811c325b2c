"""Where a fork server lives, what keys it, and what client, server and child share:
the settings, the request's framing and the signals passed on."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import signal
import stat
import struct
import sys
import sysconfig
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kafkatest._ground.project_files import cache_dir

KEYED_PREFIXES = (
    *("PYTHON", "LD_", "LANG", "LC_"),  # the interpreter, native libraries, the locale
    *("PYSPARK_", "SPARK_", "JAVA_", "ARROW_", "GRPC_"),
)
#: A request is its header (magic, length) sent with the three descriptors, then JSON.
MAGIC = b"KTP1"
HEADER = struct.Struct("!4sI")
MAX_REQUEST = 8 << 20
START_TIMEOUT_S = 120.0
#: Signals the client passes on to the run (Ctrl-C, a closed terminal, `kill`).
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
#: After the client vanished: the run is interrupted, then ended if it ignores that.
ORPHAN_GRACE_S = 30.0


#: Where the server is built and tested: Linux (SO_PEERCRED, /proc). On macOS a fork
#: beside the threads pyarrow and grpc start is unsafe (Objective-C's runtime), which
#: is why Python's multiprocessing stopped forking there; `kafkatest pytest` then runs
#: pytest itself.
FORK_SERVER_PLATFORM = sys.platform.startswith("linux")


class ForkServerUnavailable(Exception):
    """The fork server cannot serve this run: the message says why, and the client then
    runs pytest itself."""


@dataclass(frozen=True)
class ForkServerSettings:
    """What the project asks of its fork server (environment, then the pytest ini
    around the working directory, as its pytest runs read them)."""

    preload: tuple[str, ...] = ()
    idle_minutes: float = 30.0

    @classmethod
    def read(cls, environ: Mapping[str, str]) -> ForkServerSettings:
        from kafkatest._ground.project_files import project_ini
        from kafkatest.config import Config

        config = Config.build(ini=project_ini(), environ=environ)  # ConfigError: a SetupError
        return cls(config.pytest_server_preload, config.pytest_server_idle_minutes)


def server_key(environ: Mapping[str, str], settings: ForkServerSettings) -> str:
    """What a server's preloaded state depends on, hashed: the interpreter, the keyed
    variables and the preload list (its idle time is its own)."""
    keyed = sorted((k, v) for k, v in environ.items() if k.startswith(KEYED_PREFIXES))
    material = json.dumps(
        [sys.executable, sys.prefix, sys.version, keyed, settings.preload]
    ).encode()
    return hashlib.sha256(material).hexdigest()[:16]


def servers_dir(cache: Path | None = None) -> Path:
    """The user's private folder of servers (mode 0700, owned by them, checked): the
    cache's, or, when that path is too long for a Unix socket's address (108 bytes), one
    under the temporary directory named after it."""
    folder = (cache or cache_dir()) / "pytest-servers"
    if len(str(folder / ("0" * 16 + ".sock"))) > 100:
        import tempfile

        named = hashlib.sha256(str(folder).encode()).hexdigest()[:12]
        folder = Path(tempfile.gettempdir()) / f"kafkatest-{os.getuid()}-{named}"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    facts = folder.lstat()
    if facts.st_uid != os.getuid() or not stat.S_ISDIR(facts.st_mode):
        raise ForkServerUnavailable(f"{folder} is not a folder of this user's: remove it")
    if facts.st_mode & 0o077:
        folder.chmod(0o700)
    return folder


def socket_path(key: str) -> Path:
    return servers_dir() / f"{key}.sock"


def scripts_dir() -> str:
    """Where the `pytest` command lives: its sys.path[0], which each run gets too."""
    return sysconfig.get_path("scripts")


@functools.cache
def pytest_command() -> Callable[[], int]:
    """What the installed `pytest` command calls (its console-script entry point;
    found once, in the server)."""
    from importlib.metadata import entry_points

    (command,) = entry_points(group="console_scripts", name="pytest")
    return command.load()  # type: ignore[no-any-return]


def private_file(path: Path, mode: str) -> int:
    """A descriptor of `path` for `mode` ("w" truncates, "a" appends), created or
    made 0600: the server's state, log and lock are its user's alone, as its folder is."""
    flags = os.O_CREAT | os.O_WRONLY | (os.O_TRUNC if mode == "w" else os.O_APPEND)
    fd = os.open(path, flags | os.O_NOFOLLOW, 0o600)
    os.fchmod(fd, 0o600)
    return fd


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path`, readable by its user alone."""
    with os.fdopen(private_file(path, "w"), "w") as out:
        out.write(text)
