"""`demo`, `doctor` and `tools` moved into `kafkatest.apps` (issue 46); their old paths
still give the same objects, with a DeprecationWarning naming the new home."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest


@pytest.mark.parametrize(
    ("old", "name"),
    [("demo", "run_demo"), ("doctor", "run_checks"), ("tools", "run_kafka_tool")],
)
def test_the_old_path_warns_and_gives_the_same_object(old: str, name: str) -> None:
    new = importlib.import_module(f"kafkatest.apps.{old}")
    alias = importlib.import_module(f"kafkatest.{old}")
    with pytest.warns(
        DeprecationWarning, match=f"{name} moved: import it from kafkatest.apps.{old}"
    ):
        value = getattr(alias, name)
    assert value is getattr(new, name)
    with pytest.raises(AttributeError):
        alias.not_a_name  # noqa: B018


def test_the_demo_finds_the_checkouts_job_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kafkatest demo` run elsewhere than the checkout still finds its sample job (it
    looks beside the package, which moved one folder down into apps/)."""
    from kafkatest.apps.demo import JOB_RELATIVE, find_job

    monkeypatch.chdir(tmp_path)
    assert find_job(None) == Path(__file__).resolve().parents[1] / JOB_RELATIVE
