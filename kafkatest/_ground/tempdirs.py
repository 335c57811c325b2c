"""Temporary directories that do not outlive their run, even a killed one.

Brokers, Spark and job processes write logs and data to temp dirs. A run that ends
normally removes its own (on close, or at interpreter exit at the latest); a run that
was SIGKILLed cannot, so each directory records its owner's pid and the next run
removes those whose owner is gone.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
from pathlib import Path

_OWNER_FILE = ".kafkatest-owner"
_owned: set[Path] = set()


def owned_tempdir(prefix: str) -> Path:
    """A fresh temp dir named `prefix*`, removed at exit; stale ones are swept first."""
    sweep_stale(prefix)
    path = Path(tempfile.mkdtemp(prefix=prefix))
    (path / _OWNER_FILE).write_text(str(os.getpid()))
    _owned.add(path)
    return path


def remove(path: Path) -> None:
    """Remove an owned directory now (when its user is done with it)."""
    _owned.discard(path)
    shutil.rmtree(path, ignore_errors=True)


def sweep_stale(prefix: str) -> None:
    """Remove `prefix*` temp dirs whose owning process no longer exists."""
    for candidate in Path(tempfile.gettempdir()).glob(f"{prefix}*"):
        try:
            owner = int((candidate / _OWNER_FILE).read_text())
        except (OSError, ValueError):
            continue  # not ours, or still being created
        if not process_alive(owner):
            shutil.rmtree(candidate, ignore_errors=True)


def boot_id() -> str:
    """This boot of the machine ('' where the kernel does not say): a pid recorded in an
    earlier boot may since belong to another process."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def process_alive(pid: int) -> bool:
    """Whether a process `pid` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@atexit.register
def _remove_owned() -> None:
    for path in list(_owned):
        with contextlib.suppress(Exception):
            remove(path)
