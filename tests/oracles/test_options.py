"""The oracles' shared options: declared once, typed for callers, checked when given."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from kafkatest.oracles import OracleKeywords, OracleOptions
from kafkatest.oracles.options import OUTPUT_MODES, SINKS


def test_the_keywords_callers_pass_are_the_options_the_oracles_hold() -> None:
    from pyspark.sql import SparkSession  # named only for type checkers in the module

    names = {"SparkSession": SparkSession}
    hints = typing.get_type_hints(OracleKeywords, localns=names)
    fields = {f.name: f for f in dataclasses.fields(OracleOptions)}
    assert set(hints) == set(fields)
    resolved = typing.get_type_hints(OracleOptions, localns=names)
    for name, hint in hints.items():
        assert typing.get_origin(hint) is typing.Required or hint == resolved[name], name


class _Broker:
    backend = "emulator"


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ({"sink": "table"}, "sink must be one of 'topic', 'path', 'memory'"),
        (
            {"output_mode": "append-only"},
            "output_mode must be one of 'append', 'update', 'complete'",
        ),
        ({"partitions": 0}, "partitions must be 1 to 1000"),
        ({"partitions": 2.5}, "partitions must be a whole number"),
        ({"tolerance": float("nan")}, "tolerance must be a finite number"),
        ({"timeout_s": -1}, "timeout_s must be a positive number"),
        ({"ignore": "ts"}, "ignore takes a list of columns"),
        ({"sink": "memory", "process": True}, "a memory table lives in the session"),
        ({"spark": None}, "needs spark="),
    ],
)
def test_a_bad_option_is_refused_with_what_to_give(given: dict[str, object], words: str) -> None:
    options = {"broker": _Broker(), "spark": object(), **given}
    with pytest.raises((ValueError, TypeError), match=words.replace("(", r"\(")):
        OracleOptions(**options)  # type: ignore[arg-type]


def test_a_misspelt_keyword_is_refused_not_dropped() -> None:
    with pytest.raises(TypeError, match="unexpected keyword arguments 'sikn'"):
        OracleOptions.of(
            "assert_split_invariant", {"broker": _Broker(), "spark": object(), "sikn": "memory"}
        )
    with pytest.raises(TypeError, match="needs broker="):
        OracleOptions.of("assert_split_invariant", {"spark": object()})


def test_the_choices_are_spark_s_own_names() -> None:
    assert OUTPUT_MODES == ("append", "update", "complete")
    assert SINKS == ("topic", "path", "memory")
