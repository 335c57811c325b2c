"""Whole-DataFrame equality through chispa, for outputs with no delivery semantics.

When a job's output is a plain table (a file sink, a memory sink), chispa's
row-by-row diff is the clearest message; ignored columns (timestamps, offsets)
are dropped first because they differ on every run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def assert_frames_equal(
    expected: DataFrame,
    actual: DataFrame,
    *,
    ignore: Sequence[str] = (),
    ignore_row_order: bool = True,
    ignore_column_order: bool = True,
    ignore_nullable: bool = True,
) -> None:
    """Assert two DataFrames hold the same rows (chispa's diff on failure).

    chispa raises plain exceptions; they become `AssertionError`s here so that
    pytest reports a failed check, not a crashed test.
    """
    import chispa

    try:
        chispa.assert_df_equality(
            expected.drop(*ignore),
            actual.drop(*ignore),
            ignore_row_order=ignore_row_order,
            ignore_column_order=ignore_column_order,
            ignore_nullable=ignore_nullable,
        )
    except (
        chispa.DataFramesNotEqualError,
        chispa.SchemasNotEqualError,
        chispa.ColumnsNotEqualError,
    ) as exc:
        raise AssertionError(f"DataFrames differ ({type(exc).__name__}):{exc}") from exc
