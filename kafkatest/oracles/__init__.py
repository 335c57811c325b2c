"""Oracles for what a streaming job computes: results that must not depend on how the
input was cut into micro-batches, on a restart from the checkpoint, or on redelivery.

Each oracle runs one job several ways over the same records and compares the sinks
(see docs/oracles.md)::

    from kafkatest.oracles import (assert_split_invariant, assert_restart_invariant,
                                   assert_redelivery_invariant)
"""

from kafkatest.oracles.invariants import (
    assert_redelivery_invariant,
    assert_restart_invariant,
    assert_split_invariant,
)
from kafkatest.oracles.report import Comparison, OracleAssertionError, OracleReport
from kafkatest.oracles.runs import OracleError, RunResult, StopPoint
from kafkatest.oracles.sinks import read_directory, read_topic

__all__ = [
    "Comparison",
    "OracleAssertionError",
    "OracleError",
    "OracleReport",
    "RunResult",
    "StopPoint",
    "assert_redelivery_invariant",
    "assert_restart_invariant",
    "assert_split_invariant",
    "read_directory",
    "read_topic",
]
