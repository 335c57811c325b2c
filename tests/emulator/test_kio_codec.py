"""Importing the emulator does not run kio's hypothesis hooks (1.7 s and a stray
``.hypothesis/`` folder in the user's directory), and property tests can still
ask for them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: Draws kio's int8 type through hypothesis and prints whether each value fits.
_DRAW_I8 = """
drawn = []
@settings(max_examples=20, database=None)
@given(st.from_type(i8))
def draw(value):
    drawn.append(value)
draw()
print("bounded", all(-128 <= v <= 127 for v in drawn), len(drawn) > 0)
"""

_IMPORT_AND_DRAW = (
    """
import hypothesis.strategies as st
from hypothesis import given, settings
import kafkatest.brokers.emulator
import kio.static._phantom as phantom
from kio.static.primitive import i8
print("hooks", phantom.hypothesis is not None)
from kafkatest.kio_codec import register_hypothesis_strategies
register_hypothesis_strategies()
register_hypothesis_strategies()  # idempotent
"""
    + _DRAW_I8
)


def _python_in(folder: Path, code: str) -> str:
    """Run `code` in a fresh interpreter whose working directory is `folder`."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_kio_hooks_are_off_until_a_property_test_asks(tmp_path: Path) -> None:
    lines = _python_in(tmp_path, _IMPORT_AND_DRAW).split("\n")
    assert "hooks False" in lines  # kio defined its types without the hooks
    assert "bounded True True" in lines  # and registering them later works


def test_the_import_alone_makes_no_hypothesis_folder(tmp_path: Path) -> None:
    _python_in(tmp_path, "import hypothesis.strategies, kafkatest.brokers.emulator")
    assert not (tmp_path / ".hypothesis").exists()


_IMPORT_THEN_HYPOTHESIS = (
    """
import sys
import kafkatest.brokers.emulator
print("hypothesis imported", "hypothesis" in sys.modules)
print("finders left", [type(f).__name__ for f in sys.meta_path if "Hidden" in type(f).__name__])
import hypothesis.strategies as st
from hypothesis import given, settings
from kio.static.primitive import i8
from kafkatest.kio_codec import register_hypothesis_strategies
register_hypothesis_strategies()
"""
    + _DRAW_I8
)


def test_the_emulator_loads_without_importing_hypothesis(tmp_path: Path) -> None:
    """0.1-0.2 s of every run that starts an emulator; hypothesis still works after."""
    lines = _python_in(tmp_path, _IMPORT_THEN_HYPOTHESIS).split("\n")
    assert "hypothesis imported False" in lines
    assert "finders left []" in lines
    assert "bounded True True" in lines
