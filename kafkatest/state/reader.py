"""A streaming query's state, read back from its checkpoint as plain rows.

A test of a stateful job wants to say "after the watermark passed, no session for ann
is held" or "the dedup holds these ids", which the sink never shows. Spark 4.0 added a
data source that reads a checkpoint's state stores (``format("statestore")``) and the
operators they belong to (``format("state-metadata")``); these functions call it and
give rows as dicts, after the query stopped or while it runs. Apache Spark 3.5 has no
such reader: there the functions refuse, naming what the query's progress reports
instead (each stateful operator's ``numRowsTotal``).

Before any Spark job is started, what can be checked from the checkpoint's files is
(the checkpoint holds state, the batch was committed, the change feed has its
changelog files), so a mistake gets a sentence instead of an executor's stack trace.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafkatest.checkpoints.logs import committed_batches
from kafkatest.errors import KafkaTestError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: The first Apache Spark line with the state data source (SPARK-45511) and its
#: metadata source, change feed and transformWithState variables.
READER_SINCE = (4, 0)
#: The operator name a stream-stream join's state has in the metadata and progress.
JOIN = "symmetricHashJoin"
JOIN_SIDES = ("left", "right")
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
CHANGELOG_CONF = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"


class StateReaderUnavailable(KafkaTestError):
    """The Spark that runs the session has no state data source (before 4.0)."""


class StateReadError(KafkaTestError):
    """The state cannot be read as asked (no such operator, batch or variable)."""


def spark_line(spark: SparkSession) -> tuple[int, int]:
    """The (major, minor) of the Spark that serves `spark` (the server's, over Connect)."""
    found = re.match(r"(\d+)\.(\d+)", str(spark.version))
    if not found:
        raise StateReadError(f"cannot tell the Spark line from version {spark.version!r}")
    return int(found.group(1)), int(found.group(2))


def reader_refusal(spark: SparkSession) -> str:
    """Why `spark` cannot read state ('' when it can)."""
    if spark_line(spark) >= READER_SINCE:
        return ""
    return (
        f"reading a checkpoint's state needs Spark's state data source "
        f"(format 'statestore'), which Apache Spark has from {READER_SINCE[0]}.{READER_SINCE[1]};"
        f" this session runs Spark {spark.version}. On this line the query's progress "
        "reports each stateful operator's rows (query.lastProgress['stateOperators'], "
        "what assert_state_bounded reads)"
    )


def _require_reader(spark: SparkSession) -> None:
    refusal = reader_refusal(spark)
    if refusal:
        raise StateReaderUnavailable(refusal)


def _local(checkpoint: str | Path) -> Path:
    text = str(checkpoint)
    if text.startswith("file:"):
        text = re.sub(r"^file:(//)?", "", text)
    return Path(text).absolute()


def _checked(checkpoint: str | Path) -> Path:
    path = _local(checkpoint)
    if not path.is_dir():
        raise StateReadError(f"no checkpoint at {path}: give the query's checkpointLocation")
    if not (path / "state").is_dir():
        raise StateReadError(
            f"the checkpoint {path} holds no state: the query has no stateful operator, or "
            "it never committed a batch"
        )
    return path


def state_metadata(spark: SparkSession, checkpoint: str | Path) -> list[dict[str, Any]]:
    """The checkpoint's stateful operators, one dict each: ``operatorId``,
    ``operatorName`` (``dedupe``, ``stateStoreSave``, ``symmetricHashJoin``,
    ``transformWithStateInPandasExec``...), ``stateStoreName``, ``numPartitions``,
    ``minBatchId``, ``maxBatchId`` and ``operatorProperties`` (a dict: a
    transformWithState operator's time mode and state variables)."""
    _require_reader(spark)
    path = _checked(checkpoint)
    rows = spark.read.format("state-metadata").load(str(path)).collect()
    out = []
    for row in rows:
        entry = row.asDict(recursive=True)
        properties = entry.get("operatorProperties")
        entry["operatorProperties"] = json.loads(properties) if properties else {}
        out.append(entry)
    return sorted(out, key=lambda e: (e["operatorId"], e["stateStoreName"]))


def read_state(
    spark: SparkSession,
    checkpoint: str | Path,
    *,
    operator_id: int = 0,
    batch_id: int | None = None,
    store_name: str | None = None,
    join_side: str | None = None,
    state_var: str | None = None,
    timers: bool = False,
    changes_from: int | None = None,
) -> list[dict[str, Any]]:
    """The state operator `operator_id` held after batch `batch_id` (the last committed
    one by default), one dict per state row: ``key``, ``value`` and ``partition_id``
    (a transformWithState list variable gives ``list_element``, a map variable
    ``user_map_key`` and ``user_map_value``, as Spark names them). Structs are dicts.

    - A stream-stream join keeps one store per side: `join_side` "left" or "right"
      reads one, and None reads both, each row with ``side``.
    - A transformWithState operator keeps one store per state variable: name it with
      `state_var`; ``timers=True`` reads its registered timers instead (``key``,
      ``expiration_timestamp_ms``).
    - ``changes_from=n`` reads the change feed from batch n to `batch_id`: one row per
      change (``batch_id``, ``change_type`` "update" or "delete", key, value). It needs
      the RocksDB state store with changelog checkpointing on when the query first ran.

    Works after the query stopped. Refuses with `StateReaderUnavailable` before Spark
    4.0, and with `StateReadError` for an operator, batch or variable the checkpoint
    does not have.
    """
    # state_metadata refuses a Spark without the reader and a path that holds no state.
    operators = [m for m in state_metadata(spark, checkpoint) if m["operatorId"] == operator_id]
    path = _local(checkpoint)
    _check_operator(path, operator_id, operators)
    options: dict[str, str] = {"operatorId": str(operator_id)}
    if batch_id is not None:
        _check_batch(path, batch_id)
        options["batchId"] = str(batch_id)
    if store_name is not None:
        options["storeName"] = store_name
    name = operators[0]["operatorName"] if operators else ""
    if name.startswith("transformWithState"):
        options.update(_variable_options(operators[0], state_var, timers))
    elif state_var is not None or timers:
        raise StateReadError(
            f"operator {operator_id} is {name or 'not a transformWithState operator'}: "
            "state_var and timers are for a transformWithState operator's variables"
        )
    if changes_from is not None:
        _check_change_feed(path, operator_id, changes_from)
        options["readChangeFeed"] = "true"
        options["changeStartBatchId"] = str(changes_from)
        if batch_id is not None:
            options["changeEndBatchId"] = options.pop("batchId")
    if join_side is not None and join_side not in JOIN_SIDES:
        raise StateReadError(f"join_side must be 'left' or 'right', not {join_side!r}")
    if name == JOIN and join_side is None:
        return [
            {**row, "side": side}
            for side in JOIN_SIDES
            for row in _rows(spark, path, {**options, "joinSide": side})
        ]
    if join_side is not None:
        if operators and name != JOIN:
            raise StateReadError(f"operator {operator_id} is {name}, not a stream-stream join")
        options["joinSide"] = join_side
    return _rows(spark, path, options)


def _rows(spark: SparkSession, path: Path, options: Mapping[str, str]) -> list[dict[str, Any]]:
    frame = spark.read.format("statestore").options(**options).load(str(path))
    return [row.asDict(recursive=True) for row in frame.collect()]


def _check_operator(path: Path, operator_id: int, operators: list[dict[str, Any]]) -> None:
    if operators or (path / "state" / str(operator_id)).is_dir():
        return
    held = sorted(int(p.name) for p in (path / "state").iterdir() if p.name.isdigit())
    raise StateReadError(
        f"the checkpoint {path} has no stateful operator {operator_id}; it has "
        f"{', '.join(map(str, held)) or 'none'} (state_metadata(spark, checkpoint) names them)"
    )


def _check_batch(path: Path, batch_id: int) -> None:
    committed = committed_batches(path)
    if batch_id not in committed:
        shown = f"{committed[0]} to {committed[-1]}" if committed else "none"
        raise StateReadError(
            f"batch {batch_id} of {path} was never committed (committed batches: {shown}): "
            "state is kept for committed batches only"
        )


def _variable_options(
    operator: Mapping[str, Any], state_var: str | None, timers: bool
) -> dict[str, str]:
    variables = [
        v
        for v in operator["operatorProperties"].get("stateVariables", [])
        if not str(v.get("stateName", "")).startswith("$")  # Spark's own (timers, TTL)
    ]
    names = [str(v["stateName"]) for v in variables]
    listing = ", ".join(f"{v['stateName']!r} ({v['stateVariableType']})" for v in variables)
    if timers:
        if state_var is not None:
            raise StateReadError("give state_var or timers=True, not both")
        return {"readRegisteredTimers": "true"}
    if state_var is None:
        raise StateReadError(
            f"operator {operator['operatorId']} ({operator['operatorName']}) keeps its state "
            f"in variables: name one with state_var= ({listing or 'it has none'}), or "
            "read its timers with timers=True"
        )
    if state_var not in names:
        raise StateReadError(
            f"operator {operator['operatorId']} has no state variable {state_var!r}; it has "
            f"{listing or 'none'}"
        )
    return {"stateVarName": state_var}


def _check_change_feed(path: Path, operator_id: int, start: int) -> None:
    if start < 0:
        raise StateReadError(f"changes_from must be a batch id >= 0, not {start}")
    if not any((path / "state" / str(operator_id)).rglob("*.changelog")):
        raise StateReadError(
            "the change feed reads the RocksDB state store's changelog files, and this "
            f"checkpoint has none: run the query with spark.sql.streaming.stateStore."
            f"providerClass={ROCKSDB} and {CHANGELOG_CONF}=true from its first batch"
        )
