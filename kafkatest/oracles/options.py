"""What every oracle takes beside its own knobs: how the job is run, and how its sink is
read and compared. Declared once here, as the keywords a caller passes
(`OracleKeywords`, for type checkers) and the checked value the oracles use
(`OracleOptions`, with the defaults); tests/oracles/test_options.py holds the two to
the same names and types.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypedDict

from typing_extensions import Required

from kafkatest.brokers.base import Broker

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: ``read_sink(sink) -> rows``: `sink` is the run's sink topic name, directory or table.
SinkReader = Callable[[str], list[dict[str, Any]]]

#: How a job writes its sink: every row (append), changed rows (update) or the whole
#: result each batch (complete), as ``DataStreamWriter.outputMode`` names them.
OUTPUT_MODES = ("append", "update", "complete")
#: What a job is given to write to: a fresh topic, a fresh directory, or a memory
#: table name (``.format("memory").queryName(sink)``).
SINKS = ("topic", "path", "memory")
DUPLICATES = ("forbid", "allow", "replayed")


class OracleKeywords(TypedDict, total=False):
    """The keywords every oracle takes (see `OracleOptions` for what each means)."""

    spark: SparkSession | None
    broker: Required[Broker]
    partitions: int | None
    sink: str
    output_mode: str | None
    read_sink: SinkReader | None
    tolerance: float
    allow_late: bool
    event_time: str | None
    group_by: Sequence[str] | None
    ignore: Sequence[str]
    seed_options: Mapping[str, Any] | None
    process: bool
    timeout_s: float
    job_options: Mapping[str, str] | None


@dataclass(frozen=True)
class OracleOptions:
    """The oracles' shared settings, checked when made.

    - `partitions`: of each run's source topic; None picks 3, or fewer where the
      restart oracle's stops need more batches than 3 partitions give.
    - `sink`: "topic", "path" or "memory"; `read_sink(sink) -> rows` replaces the reader.
    - `output_mode`: how the job writes; None reads it from the query's plan. With
      "update" or "complete" a topic is read as the table it represents (the last value
      per Kafka key; a tombstone deletes it), a memory table or directory as its
      final contents.
    - `tolerance`: floats compare within it. `ignore`: columns left out of the compare.
    - `allow_late`: excuse differences that records behind the watermark in one run
      only can explain (a row missing, or smaller by their contribution).
    - `event_time`: the value field the watermark is on (found in the plan if None);
      `group_by`: the fields that tie a sink row to its inputs (default: shared ones).
    - `seed_options`: passed to `seed`; `process`: run the job in its own process;
      `timeout_s`: per run; `job_options`: more options for the job's Kafka source.
    """

    broker: Broker
    spark: SparkSession | None = None
    partitions: int | None = None
    sink: str = "topic"
    output_mode: str | None = None
    read_sink: SinkReader | None = None
    tolerance: float = 1e-9
    allow_late: bool = False
    event_time: str | None = None
    group_by: Sequence[str] | None = None
    ignore: Sequence[str] = field(default=())
    seed_options: Mapping[str, Any] | None = None
    process: bool = False
    timeout_s: float = 180.0
    job_options: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        if self.sink not in SINKS:
            raise ValueError(
                f"sink must be one of {', '.join(map(repr, SINKS))}, not {self.sink!r}"
            )
        if self.output_mode is not None and self.output_mode not in OUTPUT_MODES:
            raise ValueError(
                f"output_mode must be one of {', '.join(map(repr, OUTPUT_MODES))} (or None: "
                f"read from the query), not {self.output_mode!r}"
            )
        if self.partitions is not None and (
            isinstance(self.partitions, bool) or not isinstance(self.partitions, int)
        ):
            raise TypeError(f"partitions must be a whole number, not {self.partitions!r}")
        if self.partitions is not None and not 1 <= self.partitions <= 1000:
            raise ValueError(f"partitions must be 1 to 1000, not {self.partitions}")
        if not (isinstance(self.tolerance, (int, float)) and 0 <= self.tolerance < math.inf):
            raise ValueError(f"tolerance must be a finite number >= 0, not {self.tolerance!r}")
        if not (isinstance(self.timeout_s, (int, float)) and 0 < self.timeout_s < math.inf):
            raise ValueError(
                f"timeout_s must be a positive number of seconds, not {self.timeout_s!r}"
            )
        if isinstance(self.ignore, str):
            raise TypeError(f"ignore takes a list of columns, not the string {self.ignore!r}")
        if self.process and self.sink == "memory":
            raise ValueError(
                'sink="memory" needs the job in this process (a memory table lives in the '
                "session that wrote it): drop process=True, or use a topic or path sink"
            )
        if not self.process and self.spark is None:
            raise ValueError("a job run in this process needs spark= (or process=True)")
        if self.sink in ("path", "memory") and self.spark is None and self.read_sink is None:
            raise ValueError(f'sink="{self.sink}" is read with Spark: pass spark=, or read_sink=')

    @classmethod
    def of(cls, oracle: str, given: Mapping[str, Any]) -> OracleOptions:
        """The options an oracle was called with; an unknown keyword (a typo) is refused
        with the names it could have meant, not dropped."""
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise TypeError(
                f"{oracle}() got unexpected keyword arguments {', '.join(map(repr, unknown))}; "
                f"its options are {', '.join(names)} (and its own, in its docstring)"
            )
        if "broker" not in given:
            raise TypeError(f"{oracle}() needs broker= (the kafka_broker fixture)")
        return cls(**given)

    @property
    def source_partitions(self) -> int:
        """Partitions of a run's source topic unless the stops ask for fewer."""
        return 3 if self.partitions is None else self.partitions


def check_duplicates(duplicates: str | None) -> None:
    """A restart oracle's `duplicates`: one of `DUPLICATES`, or None (chosen by the sink)."""
    if duplicates is not None and duplicates not in DUPLICATES:
        raise ValueError(
            f"duplicates must be one of {', '.join(DUPLICATES)} or None, not {duplicates!r}"
        )


def check_copies(copies: int) -> None:
    """A redelivery oracle's `copies`: each record read 2 to 100 times."""
    if isinstance(copies, bool) or not isinstance(copies, int) or not 2 <= copies <= 100:
        raise ValueError(f"copies must be 2 to 100, not {copies!r}")
