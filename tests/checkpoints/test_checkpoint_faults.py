"""Each checkpoint fault, applied between two runs of a stateful job: what Spark did on
restart (error, replay, new query id) and what the sink got (docs/how-to/checkpoint-faults.md).

One test walks the whole table, so a Spark line that behaves differently shows every
difference at once. The first run reads payments 0-8 in batches 0-2 (three each);
payments 9-11 wait for the restart. `wrote` is what the restarted query wrote.
"""

from __future__ import annotations

from pathlib import Path

import pyspark
import pytest
from checkpoint_fault_support import ROCKSDB, FaultBench, Outcome, state_provider
from pyspark.sql import SparkSession

from kafkatest.brokers.base import Broker
from kafkatest.checkpoints import (
    CHECKPOINT_FAULTS,
    ReplayReport,
    apply_checkpoint_fault,
    delivered_offsets,
    replay_report,
    restore_checkpoint,
)

#: What Spark does with a damaged checkpoint: the broker only feeds the job (the
#: scenario test_checkpoint_fault_action runs a fault on either backend).
pytestmark = pytest.mark.kafka_backends("emulator")

PARSE_ERRORS = {"truncate": "JsonEOFException", "garbage": "MalformedInputException"}
STATE_ERROR = "CANNOT_LOAD_STATE_STORE"

#: What each fault did on PySpark 4.2 (observed; 4.0 and 3.5 below).
OBSERVED_42: dict[str, Outcome] = {
    "none": Outcome(None, False, "9-11"),
    # commits/2 is there, offsets/2 not: batch 1 is run again, then its commit is refused.
    "delete-offsets": Outcome("CONCURRENT_STREAM_LOG_UPDATE", False, "3-5"),
    **{
        f"{how}-{log}": Outcome(error, False, "")
        for how, error in PARSE_ERRORS.items()
        for log in ("offsets", "commits")
    },
    # The crash-before-commit state: batch 2 replays, to the sink again, then batch 3.
    "delete-commits": Outcome(None, False, "6-11"),
    "crash-before-commit": Outcome(None, False, "6-11"),
    # SPARK-55058's fix: 4.2 refuses to start rather than give the query a new id.
    "delete-metadata": Outcome("STREAMING_CHECKPOINT_MISSING_METADATA_FILE", False, ""),
    "truncate-metadata": Outcome("JsonEOFException", False, ""),
    "garbage-metadata": Outcome("JsonParseException", False, ""),
    # Read only by a query with no offsets log yet: a resumed query ignores it.
    **{f"{how}-sources": Outcome(None, False, "9-11") for how in ("delete", "truncate", "garbage")},
    # The partition whose newest delta is gone fails; the other may have written first.
    "delete-state-delta": Outcome(
        f"{STATE_ERROR}.CANNOT_READ_DELTA_FILE_NOT_EXISTS", False, "9,11", partial=True
    ),
    "truncate-state-delta": Outcome(f"{STATE_ERROR}.UNCATEGORIZED", False, "9,11", partial=True),
    "garbage-state-delta": Outcome(f"{STATE_ERROR}.UNCATEGORIZED", False, "9,11", partial=True),
    "delete-state-snapshot": Outcome(
        f"{STATE_ERROR}.CANNOT_READ_STREAMING_STATE_FILE", False, "9,11", partial=True
    ),
    "truncate-state-snapshot": Outcome(f"{STATE_ERROR}.UNCATEGORIZED", False, "9,11", partial=True),
    "garbage-state-snapshot": Outcome(f"{STATE_ERROR}.UNCATEGORIZED", False, "9,11", partial=True),
    # Logs and state as after batch 0: batches 1 and 2 are run and written again.
    "rewind-to-0": Outcome(None, False, "3-11"),
    # A backup taken after batch 2, restored after the restart ran batch 3: batch 3 again.
    "restore-backup": Outcome(None, False, "9-11"),
}
#: Where PySpark 4.0.0 did otherwise (observed, `nox -s spark40`).
OBSERVED_40: dict[str, Outcome] = {
    **OBSERVED_42,
    # SPARK-55058 itself: a new query id, and the query runs on as if nothing happened.
    "delete-metadata": Outcome(None, True, "9-11"),
    # A resumed query reads sources/ on 4.0, and fails on a damaged one.
    "truncate-sources": Outcome("IllegalArgumentException", False, ""),
    "garbage-sources": Outcome("IllegalArgumentException", False, ""),
}
#: Where PySpark 3.5.7 did otherwise (observed, `nox -s spark35`): no error classes yet,
#: the state store's own exceptions.
OBSERVED_35: dict[str, Outcome] = {
    **OBSERVED_42,
    "delete-metadata": Outcome(None, True, "9-11"),
    "delete-state-delta": Outcome("FileNotFoundException", False, "9,11", partial=True),
    "truncate-state-delta": Outcome("EOFException", False, "9,11", partial=True),
    "garbage-state-delta": Outcome("IOException", False, "9,11", partial=True),
    "delete-state-snapshot": Outcome("FileNotFoundException", False, "9,11", partial=True),
    "truncate-state-snapshot": Outcome("EOFException", False, "9,11", partial=True),
    "garbage-state-snapshot": Outcome("NoSuchFileException", False, "9,11", partial=True),
}
#: Faults whose effect is Spark's documented checkpoint semantics, the same on every line.
PORTABLE = ("none", "delete-commits", "crash-before-commit", "rewind-to-0", "restore-backup")
#: What `replay_report` says the restart ran again: batch ids, records sent twice.
REPLAYED = {
    "none": ([], 0),
    "delete-commits": ([2], 3),
    "crash-before-commit": ([2], 3),
    "rewind-to-0": ([1, 2], 6),
    "restore-backup": ([3], 3),
}


def expected_outcomes() -> dict[str, Outcome]:
    """The whole table on the lines it was observed on; elsewhere (a line not run here)
    only the faults whose effect is Spark's documented semantics."""
    for line, table in (("4.2.", OBSERVED_42), ("4.0.", OBSERVED_40), ("3.5.", OBSERVED_35)):
        if pyspark.__version__.startswith(line):
            return table
    return {name: OBSERVED_42[name] for name in PORTABLE}


def test_each_checkpoint_fault_then_a_restart(
    spark: SparkSession, kafka_broker: Broker, tmp_path: Path
) -> None:
    bench = FaultBench(spark, kafka_broker, tmp_path, "checkpoint-faults")
    first_runs = {
        "hdfs": bench.first_run(None, "hdfs"),
        "rocksdb": bench.first_run(ROCKSDB, "rocksdb"),
    }
    bench.add_new_payments()
    expected = expected_outcomes()
    assert set(OBSERVED_42) == {"none", "rewind-to-0", "restore-backup", *CHECKPOINT_FAULTS}

    seen: dict[str, Outcome] = {}
    reports: dict[str, ReplayReport] = {}
    for fault in expected:
        label = "rocksdb" if "snapshot" in fault else "hdfs"
        checkpoint = bench.copy(first_runs[label])
        with state_provider(spark, ROCKSDB if label == "rocksdb" else None):
            if fault == "restore-backup":
                bench.restart(checkpoint, label)
            delivered = delivered_offsets(checkpoint)
            if fault == "restore-backup":
                restore_checkpoint(first_runs[label], checkpoint)
            elif fault != "none":
                apply_checkpoint_fault(checkpoint, fault)
            seen[fault], progress = bench.restart(checkpoint, label)
        reports[fault] = replay_report(delivered, progress, fault)

    differences = [
        f"{fault}: expected {want}, saw {seen[fault]}"
        for fault, want in expected.items()
        if not want.matches(seen[fault])
    ]
    assert not differences, f"PySpark {pyspark.__version__}:\n" + "\n".join(differences)
    replays = {
        name: (reports[name].replayed_batches, reports[name].replayed_records) for name in PORTABLE
    }
    assert replays == REPLAYED, "\n".join(str(reports[name]) for name in PORTABLE)
    assert "batch 2 read " in str(reports["crash-before-commit"])
    assert "replayed" in str(reports["crash-before-commit"])
    assert reports["none"].skipped == {}
