"""The state tests run jobs of the oracles' corpus (tests/oracles/corpus): put it on the path."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "oracles"))
