"""Capture what a streaming query hands to ``foreachBatch``, batch by batch.

Jobs that write through ``foreachBatch`` to a store the test cannot read can be
tested by passing a `BatchCapture` instead: it keeps every row with its batch
id, so a replayed batch (same id twice after a restart) is visible.

Over Spark Connect the function runs in a Python worker of the server, not in the
test: the capture is pickled there, and that copy writes each batch to a directory
the test's copy reads back. A local Connect server shares this machine's disk; one
on another machine does not, so there the capture stays empty (use a sink the test
can read).
"""

from __future__ import annotations

import pickle
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType


class BatchCapture:
    """A callable for ``writeStream.foreachBatch(capture)`` that records each batch.

    Rows get a ``batch_id`` column. With classic PySpark the function runs on the
    driver in this Python process; over Spark Connect a pickled copy runs on the
    server and hands the batches back through files (see the module docstring).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: list[dict[str, Any]] = []
        self._batch_ids: list[int] = []
        self._schema: StructType | None = None
        #: Where a copy running in a Connect server's worker writes its batches.
        self._spill_dir: Path | None = None
        self._spilled: set[str] = set()
        self._is_copy = False

    def __getstate__(self) -> dict[str, Any]:
        """What a Connect server's worker gets: only the directory to write to."""
        if self._spill_dir is None:
            from kafkatest._ground.tempdirs import owned_tempdir

            self._spill_dir = owned_tempdir("kafkatest-capture-")
        return {"spill_dir": str(self._spill_dir)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]
        self._spill_dir = Path(state["spill_dir"])
        self._is_copy = True

    def __call__(self, frame: DataFrame, batch_id: int) -> None:
        collected = [row.asDict(recursive=True) for row in frame.collect()]
        if self._is_copy and self._spill_dir is not None:
            name = f"{time.time_ns():020d}-{batch_id}.pickle"
            partial = self._spill_dir / f".{name}"
            partial.write_bytes(pickle.dumps((batch_id, frame.schema, collected)))
            partial.rename(self._spill_dir / name)  # readers never see half a batch
            return
        self._add(batch_id, frame.schema, collected)

    def _add(self, batch_id: int, schema: StructType, collected: list[dict[str, Any]]) -> None:
        with self._lock:
            if self._schema is None:
                self._schema = schema
            self._batch_ids.append(batch_id)
            self._rows += [{**row, "batch_id": batch_id} for row in collected]

    def _read_spilled(self) -> None:
        """Take in the batches a server-side copy wrote since the last look."""
        if self._spill_dir is None or self._is_copy:
            return
        for path in sorted(self._spill_dir.glob("[0-9]*.pickle")):
            if path.name not in self._spilled:
                self._spilled.add(path.name)
                self._add(*pickle.loads(path.read_bytes()))

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every captured row, in arrival order, with its ``batch_id``."""
        self._read_spilled()
        with self._lock:
            return list(self._rows)

    @property
    def batch_ids(self) -> list[int]:
        """Batch ids in the order the batches arrived (repeats mean a replay)."""
        self._read_spilled()
        with self._lock:
            return list(self._batch_ids)

    def batches(self) -> dict[int, list[dict[str, Any]]]:
        """Rows grouped by batch id (a replayed batch's rows appear twice)."""
        grouped: dict[int, list[dict[str, Any]]] = {}
        for row in self.rows:
            grouped.setdefault(row["batch_id"], []).append(row)
        return grouped

    def frame(self, spark: SparkSession) -> DataFrame:
        """The captured rows as a DataFrame with the query's schema plus ``batch_id``."""
        from pyspark.sql.types import LongType, StructField, StructType

        self._read_spilled()
        with self._lock:
            if self._schema is None:
                raise ValueError("no batch was captured yet: run the query first")
            schema = StructType([*self._schema.fields, StructField("batch_id", LongType())])
            rows = [tuple(row[name] for name in schema.fieldNames()) for row in self._rows]
        return spark.createDataFrame(rows, schema)
