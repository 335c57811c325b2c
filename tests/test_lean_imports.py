"""Optional packages a dependency would import for nothing are hidden from the loading
thread only, for the length of the load only (`kafkatest._ground.lean_imports`)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.fresh_interpreter import output_lines

_HIDE_WAVE = """
import sys, threading
from kafkatest._ground.lean_imports import hidden_from_this_thread

seen = {}
def other_thread():
    import wave
    seen["other thread"] = wave.__name__

with hidden_from_this_thread("wave", "threading"):
    try:
        import wave
        print("this thread imported wave")
    except ModuleNotFoundError as error:
        print("this thread:", error.name)
    worker = threading.Thread(target=other_thread)
    worker.start()
    worker.join()
    import threading  # imported before the block: never hidden
    print("threading", threading.__name__)
print("other thread:", seen.get("other thread"))
print("finders left", [type(f).__name__ for f in sys.meta_path if "Hidden" in type(f).__name__])
import wave
print("after:", wave.__name__)
"""


def test_a_package_is_hidden_from_the_loading_thread_only(tmp_path: Path) -> None:
    lines = output_lines(_HIDE_WAVE, tmp_path)
    assert lines == [
        "this thread: wave",
        "threading threading",
        "other thread: wave",
        "finders left []",
        "after: wave",
    ]


_CONNECT_WITHOUT_IPYTHON = """
import sys
from kafkatest._ground.lean_imports import import_spark_connect_client
import_spark_connect_client()
import pyspark.sql.connect.shell.progress as progress
print("IPython imported", "IPython" in sys.modules)
print("terminal size from", progress.get_terminal_size.__module__)
import IPython
print("IPython importable after", IPython.__name__)
"""

_CONNECT_AFTER_IPYTHON = """
import IPython
from kafkatest._ground.lean_imports import import_spark_connect_client
import_spark_connect_client()
import pyspark.sql.connect.shell.progress as progress
print("terminal size from", progress.get_terminal_size.__module__)
"""


@pytest.mark.skipif(
    importlib.util.find_spec("IPython") is None, reason="IPython is not installed: none to hide"
)
@pytest.mark.skipif(
    any(importlib.util.find_spec(name) is None for name in ("grpc", "pandas", "pyarrow")),
    reason="PySpark's connect extra is not installed",
)
def test_the_connect_client_loads_without_ipython(tmp_path: Path) -> None:
    """0.3 s of each run on Spark Connect where IPython is installed; a notebook that
    imported IPython keeps PySpark's use of it."""
    lines = output_lines(_CONNECT_WITHOUT_IPYTHON, tmp_path)
    assert lines[0] == "IPython imported False"
    assert not lines[1].startswith("terminal size from IPython")
    assert lines[2] == "IPython importable after IPython"
    lines = output_lines(_CONNECT_AFTER_IPYTHON, tmp_path)
    assert lines[0].startswith("terminal size from IPython")


_CONNECT_WITHOUT_COLLECTIONS = """
import gc, sys
from kafkatest._ground.lean_imports import import_spark_connect_client

class Probe:  # asked first for every module: notes the collector's state as pandas loads
    seen = []
    def find_spec(self, name, path, target=None):
        if name == "pandas":
            Probe.seen.append(gc.isenabled())
        return None

if sys.argv[1:] == ["off"]:
    gc.disable()
before = len(gc.get_objects())
sys.meta_path.insert(0, Probe())
import_spark_connect_client()
print("collector on as pandas loaded", Probe.seen)
print("collector on after", gc.isenabled())
print("objects grew by", (len(gc.get_objects()) - before) // 10_000 * 10_000, "or more")
"""


@pytest.mark.skipif(
    any(importlib.util.find_spec(name) is None for name in ("grpc", "pandas", "pyarrow")),
    reason="PySpark's connect extra is not installed",
)
def test_the_connect_client_loads_with_the_collector_paused(tmp_path: Path) -> None:
    """Its load nearly triples the objects the collector tracks, which cost two full
    collections of five in a warm re-run; paused, the young generations take them in
    after the load. A collector the caller turned off stays off."""
    lines = output_lines(_CONNECT_WITHOUT_COLLECTIONS, tmp_path)
    assert lines[0] == "collector on as pandas loaded [False]"
    assert lines[1] == "collector on after True"
    assert int(lines[2].split()[3]) >= 50_000  # why it matters
    code = _CONNECT_WITHOUT_COLLECTIONS.replace("sys.argv[1:]", '["off"]')
    assert output_lines(code, tmp_path)[:2] == [
        "collector on as pandas loaded [False]",
        "collector on after False",
    ]


_PLAINTEXT_BROKER = """
import sys
from kafkatest.brokers.emulator import EmulatorBroker
broker = EmulatorBroker()
broker.start()
broker.close()
print("cryptography imported", "cryptography" in sys.modules)
"""


def test_a_plaintext_broker_does_not_load_the_certificate_code(tmp_path: Path) -> None:
    """cryptography is 50 ms of every run's start; only a TLS broker needs it (the TLS
    tests cover that it is still found there)."""
    assert output_lines(_PLAINTEXT_BROKER, tmp_path) == ["cryptography imported False"]


def test_the_schema_registry_client_loads_without_authlib_s_warning(tmp_path: Path) -> None:
    """authlib warns on import past any filter; kafkatest's decoders load it quietly,
    and a user's own import afterwards finds it loaded (no warning they did not cause)."""
    import subprocess
    import sys

    code = (
        "from kafkatest.sinks.framed import framed_decoder\n"
        "try:\n"
        "    framed_decoder('avro', None, 't')\n"
        "except ValueError:\n"
        "    pass\n"
        "import confluent_kafka.schema_registry.avro\n"
        "print('loaded')\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout.strip() == "loaded", done.stderr
    assert "Warning" not in done.stderr, done.stderr
