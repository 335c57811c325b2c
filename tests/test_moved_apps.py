"""`demo`, `doctor` and `tools` moved into `kafkatest.apps` (issue 46); their old paths
still give the same objects, with a DeprecationWarning naming the new home."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize(
    ("old", "name"),
    [("demo", "run_demo"), ("doctor", "run_checks"), ("tools", "run_kafka_tool")],
)
def test_the_old_path_warns_and_gives_the_same_object(old: str, name: str) -> None:
    new = importlib.import_module(f"kafkatest.apps.{old}")
    alias = importlib.import_module(f"kafkatest.{old}")
    with pytest.warns(DeprecationWarning, match=f"{name} moved: import it from kafkatest.apps.{old}"):
        value = getattr(alias, name)
    assert value is getattr(new, name)
    with pytest.raises(AttributeError):
        alias.not_a_name  # noqa: B018
