"""Importing the emulator does not run kio's hypothesis hooks (1.7 s and a stray
``.hypothesis/`` folder in the user's directory), and property tests can still
ask for them."""

from __future__ import annotations

from pathlib import Path

from tests.fresh_interpreter import output_lines

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


def test_kio_hooks_are_off_until_a_property_test_asks(tmp_path: Path) -> None:
    lines = output_lines(_IMPORT_AND_DRAW, tmp_path)
    assert "hooks False" in lines  # kio defined its types without the hooks
    assert "bounded True True" in lines  # and registering them later works


def test_the_import_alone_makes_no_hypothesis_folder(tmp_path: Path) -> None:
    output_lines("import hypothesis.strategies, kafkatest.brokers.emulator", tmp_path)
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
    lines = output_lines(_IMPORT_THEN_HYPOTHESIS, tmp_path)
    assert "hypothesis imported False" in lines
    assert "finders left []" in lines
    assert "bounded True True" in lines
