"""`python -m kafkatest.emulator`: the standalone emulator (`kafkatest emulator`).

The standalone server is an application built on the emulator, not part of it
(`kafkatest.apps.standalone`): this doorway runs it by name, so the emulator
library itself imports nothing above it.
"""

import runpy

runpy.run_module("kafkatest.apps.standalone", run_name="__main__", alter_sys=True)
