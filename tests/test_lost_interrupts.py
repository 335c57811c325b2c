"""A Ctrl-C that lands inside a finalizer still interrupts the run.

py4j frees Java objects from weakref callbacks, so a Spark driver often runs one
when Ctrl-C comes; Python drops exceptions raised there. Found by hand: Ctrl-C
during `kafkatest demo`'s query start was lost and the demo finished with status 0.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: SIGINT is sent from inside `__del__` and handled there (at the sleep, which the
#: signal interrupts), so the KeyboardInterrupt is raised in the finalizer on any load.
CTRL_C_IN_A_FINALIZER = """
import os, signal, sys, time
from kafkatest.spark.interrupts import redeliver_interrupts_lost_in_finalizers

if sys.argv[1] == "redeliver":
    redeliver_interrupts_lost_in_finalizers()

class FreedLikeAJavaObject:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.5)

try:
    FreedLikeAJavaObject()
    time.sleep(3)
    print("went on")
except KeyboardInterrupt:
    print("interrupted")
"""


def _run(mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CTRL_C_IN_A_FINALIZER, mode],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=False,
    )


def test_python_alone_loses_a_ctrl_c_raised_in_a_finalizer() -> None:
    """The premise: without the hook, the interrupt is printed and dropped."""
    run = _run("python-alone")
    assert run.stdout.strip() == "went on"
    assert "Exception ignored in" in run.stderr and "KeyboardInterrupt" in run.stderr


def test_the_lost_ctrl_c_is_delivered_again_outside_the_finalizer() -> None:
    run = _run("redeliver")
    assert run.stdout.strip() == "interrupted", run.stderr
    assert "Exception ignored" not in run.stderr


def test_other_exceptions_in_finalizers_still_reach_the_previous_hook() -> None:
    script = """
import sys
from kafkatest.spark.interrupts import redeliver_interrupts_lost_in_finalizers
seen = []
sys.unraisablehook = lambda unraisable: seen.append(unraisable.exc_type.__name__)
redeliver_interrupts_lost_in_finalizers()
redeliver_interrupts_lost_in_finalizers()  # once only: no hook wrapping itself
class Broken:
    def __del__(self):
        raise ValueError("in a finalizer")
Broken()
print(seen)
"""
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert run.stdout.strip() == "['ValueError']", run.stderr
