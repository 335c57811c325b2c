"""Run code in a fresh interpreter: what a module imports as it loads can only be
seen in a process that has imported nothing yet."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def output_lines(code: str, folder: Path) -> list[str]:
    """The lines `code` prints, run by a new interpreter in `folder`; fails the test,
    with the child's stderr, when the code raises."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()
