"""Oracles for what a streaming job computes: results that must not depend on how the
input was cut into micro-batches, on a restart from the checkpoint, or on redelivery.

Each oracle runs one job several ways over the same records and compares the sinks
(see docs/oracles.md)::

    from kafkatest.oracles import (assert_split_invariant, assert_restart_invariant,
                                   assert_redelivery_invariant, assert_invariants)
"""

from kafkatest.oracles.combined import InvariantsReport, assert_invariants
from kafkatest.oracles.invariants import (
    assert_redelivery_invariant,
    assert_restart_invariant,
    assert_split_invariant,
)
from kafkatest.oracles.options import OUTPUT_MODES, SINKS, OracleKeywords, OracleOptions
from kafkatest.oracles.report import Comparison, OracleAssertionError, OracleReport
from kafkatest.oracles.runs import OracleError, RunResult
from kafkatest.oracles.sinks import as_table, read_directory, read_memory, read_topic
from kafkatest.oracles.stops import StopPoint

__all__ = [
    "OUTPUT_MODES",
    "SINKS",
    "Comparison",
    "InvariantsReport",
    "OracleAssertionError",
    "OracleError",
    "OracleKeywords",
    "OracleOptions",
    "OracleReport",
    "RunResult",
    "StopPoint",
    "as_table",
    "assert_invariants",
    "assert_redelivery_invariant",
    "assert_restart_invariant",
    "assert_split_invariant",
    "read_directory",
    "read_memory",
    "read_topic",
]
