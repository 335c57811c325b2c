"""Oracles for what a streaming job computes: results that must not depend on how the
input was cut into micro-batches, on a restart from the checkpoint, or on redelivery.

Each oracle runs one job several ways over the same records and compares the sinks
(see docs/how-to/oracles.md)::

    from kafkatest.oracles import (assert_split_invariant, assert_restart_invariant,
                                   assert_redelivery_invariant, assert_invariants)

and one more for what a job keeps: `assert_state_bounded` runs it batch by batch and
fails state that grows with the stream instead of levelling off (a dedup or a join
without a usable watermark).
"""

from kafkatest.oracles.bounded import assert_state_bounded
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
from kafkatest.oracles.state_report import StateAssertionError, StateReport
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
    "StateAssertionError",
    "StateReport",
    "StopPoint",
    "as_table",
    "assert_invariants",
    "assert_redelivery_invariant",
    "assert_restart_invariant",
    "assert_split_invariant",
    "assert_state_bounded",
    "read_directory",
    "read_memory",
    "read_topic",
]
