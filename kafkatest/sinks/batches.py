"""Capture what a streaming query hands to ``foreachBatch``, batch by batch.

Jobs that write through ``foreachBatch`` to a store the test cannot read can be
tested by passing a `BatchCapture` instead: it keeps every row with its batch
id, so a replayed batch (same id twice after a restart) is visible.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType


class BatchCapture:
    """A callable for ``writeStream.foreachBatch(capture)`` that records each batch.

    Rows get a ``batch_id`` column. The function runs on the driver in this
    Python process (classic PySpark), so the test reads the rows directly.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: list[dict[str, Any]] = []
        self._batch_ids: list[int] = []
        self._schema: StructType | None = None

    def __call__(self, frame: DataFrame, batch_id: int) -> None:
        collected = [row.asDict(recursive=True) for row in frame.collect()]
        with self._lock:
            if self._schema is None:
                self._schema = frame.schema
            self._batch_ids.append(batch_id)
            self._rows += [{**row, "batch_id": batch_id} for row in collected]

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every captured row, in arrival order, with its ``batch_id``."""
        with self._lock:
            return list(self._rows)

    @property
    def batch_ids(self) -> list[int]:
        """Batch ids in the order the batches arrived (repeats mean a replay)."""
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

        with self._lock:
            if self._schema is None:
                raise ValueError("no batch was captured yet: run the query first")
            schema = StructType([*self._schema.fields, StructField("batch_id", LongType())])
            rows = [tuple(row[name] for name in schema.fieldNames()) for row in self._rows]
        return spark.createDataFrame(rows, schema)
