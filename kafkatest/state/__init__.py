"""A streaming query's state, as a test can see it: read back from the checkpoint
(Spark 4.0+'s state data source) and the stateful operators of a query's plan.

    from kafkatest.state import read_state, state_metadata
    rows = read_state(spark, checkpoint_dir, operator_id=0)  # [{"key", "value", "partition_id"}]
"""

from kafkatest.state.reader import (
    READER_SINCE,
    StateReadError,
    StateReaderUnavailable,
    read_state,
    reader_refusal,
    state_metadata,
)
from kafkatest.state.stores import rocksdb_state_store, session_conf

__all__ = [
    "READER_SINCE",
    "StateReadError",
    "StateReaderUnavailable",
    "read_state",
    "reader_refusal",
    "rocksdb_state_store",
    "session_conf",
    "state_metadata",
]
