"""A fuzzer for the emulator's wire side: a seeded mutator over real client frames.

`corpus` records the requests real clients send (through a recording proxy in
front of an emulator), `mutate` breaks them in the ways that once took the
emulator down, and `run` fires them at an emulator in a child process over many
connections while a probe checks it still answers, so an abort is counted rather
than fatal. `python -m kafkatest.apps.fuzz` (and `nox -s fuzz`) runs it.
"""

import kafkatest.kio_codec  # noqa: F401 - before any kio type is defined
from kafkatest.apps.fuzz.run import FuzzReport, run_fuzz

__all__ = ["FuzzReport", "run_fuzz"]
