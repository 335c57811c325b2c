"""Temp dirs of brokers, Spark and jobs never outlive their run, even a killed one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kafkatest._ground.tempdirs import owned_tempdir, remove

MAKE = "from kafkatest._ground.tempdirs import owned_tempdir; print(owned_tempdir('kafkatest-selftest-'), flush=True)"


def run_child(code: str) -> Path:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    return Path(out.stdout.strip().splitlines()[0])


def test_removed_when_the_owner_exits() -> None:
    assert not run_child(MAKE).exists()


def test_a_killed_owners_dir_is_swept_by_the_next_run() -> None:
    left = run_child(MAKE + "; import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert left.is_dir(), "SIGKILL gives the owner no chance to clean up"
    mine = owned_tempdir("kafkatest-selftest-")
    try:
        assert not left.exists()
        assert mine.is_dir()
    finally:
        remove(mine)
    assert not mine.exists()
