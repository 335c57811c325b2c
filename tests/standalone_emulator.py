"""`kafkatest emulator` run as a user outside pytest runs it, for the tests of its flags."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from kafkatest.brokers.process import free_port


@contextmanager
def standalone_emulator(*flags: str, banner_lines: int) -> Iterator[tuple[str, list[str]]]:
    """(bootstrap, the first `banner_lines` lines it printed) while it serves; stopped
    with Ctrl-C afterwards, which must end it cleanly."""
    port = free_port()
    command = [sys.executable, "-m", "kafkatest.cli", "emulator", "--port", str(port), *flags]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    lines = [process.stdout.readline() for _ in range(banner_lines)]
    try:
        assert f"bootstrap servers 127.0.0.1:{port}" in lines[0], lines
        yield f"127.0.0.1:{port}", lines
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
        assert "stopped" in out
