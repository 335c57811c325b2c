"""Repository-level pytest configuration.

The kafkatest fixtures come from the installed package's pytest11 entry point, exactly
as in a downstream repo; this file only makes the sample jobs in fixtures/ importable.
"""

import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES / "jobs"))

pytest_plugins = ["pytester"]
