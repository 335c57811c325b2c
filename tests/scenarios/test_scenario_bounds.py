"""Scenario files past kafkatest's bounds are refused when loaded, naming the field
(issue 44): a seed count of -5 seeded nothing, partition -1 spread records over every
partition, a count of 10^12 ran out of memory, a wait of 10^12 s or a timeout_s of -1
or NaN never ended; a 600-byte YAML alias bomb took 75 s and 2.5 GB; and a capture
outside the scenario's folder was read without --trust.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkatest import cli
from kafkatest.limits import MAX_SEED_RECORDS, MAX_WAIT_S
from kafkatest.scenarios import repro
from kafkatest.scenarios.spec import Scenario, ScenarioError, load_scenario
from tests.scenarios.test_scenario_files import changed, valid


@pytest.mark.parametrize(
    ("path", "value", "says"),
    [
        ("seed.0.count", -5, "seed[0]: count: a whole number from 0 to"),
        ("seed.0.count", 10**12, f"count: a whole number from 0 to {MAX_SEED_RECORDS}"),
        ("seed.0.count", 2.5, "count: a whole number"),
        ("seed.0.partition", -1, "seed[0]: partition: a whole number from 0"),
        ("seed.0.partition", 2, "seed[0].partition: topic 'src' has partitions 0..1"),
        ("timeout_s", -1, "timeout_s: a number of seconds above 0"),
        ("timeout_s", float("nan"), "timeout_s: a number of seconds above 0"),
        ("timeout_s", "NaN", "timeout_s: a number of seconds above 0"),
        ("timeout_s", 10**12, f"at most {MAX_WAIT_S}"),
        ("steps.2.do", [{"wait": {"seconds": 10**12}}], f"seconds from 0 to {MAX_WAIT_S}"),
        ("steps.0.when", {"after_seconds": 10**12}, f"seconds from 0 to {MAX_WAIT_S}"),
        (
            "steps.2.do",
            [{"seed": {"label": "b", "topic": "src", "count": -5}}],
            "steps[2].do[0].seed.count: a whole number from 0",
        ),
    ],
)
def test_a_number_past_its_bound_is_refused_naming_the_field(
    path: str, value: object, says: str
) -> None:
    with pytest.raises(ScenarioError) as refused:
        Scenario.from_data(changed(path, value))
    assert says in str(refused.value)


def test_the_defaults_and_a_valid_file_still_load() -> None:
    scenario = Scenario.from_data(valid())
    assert scenario.timeout_s == 120.0 and scenario.seed[0].count == 3


BOMB = """
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""


def test_a_yaml_alias_bomb_is_refused_at_its_first_alias(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)
    with pytest.raises(ScenarioError, match=r"line 3: an alias \(\*a\)"):
        load_scenario(path)


def test_deep_nesting_and_oversized_files_are_refused(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("seed: []\nname: " + "[" * 200_000 + "]" * 200_000 + "\n")
    # Refused by the scanner at the bracket past the bound, at its line: PyYAML's scanner
    # works harder per bracket the deeper it is (5,000 brackets took 5 s to refuse).
    with pytest.raises(ScenarioError, match="line 2: it nests deeper than 100 levels"):
        load_scenario(deep)
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * (2 << 20) + "\n")
    with pytest.raises(ScenarioError, match="over the limit"):
        load_scenario(big)


def _with_capture(tmp_path: Path, capture: str) -> Path:
    data: dict[str, Any] = valid()
    data["seed"] = [{"label": "c", "topic": "src", "capture": capture}]
    folder = tmp_path / "scenarios"
    folder.mkdir(exist_ok=True)
    path = folder / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_capture_outside_the_scenario_s_folder_needs_trust(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"kafkatest_capture": 1, "topics": {}}\n')
    started: list[str | None] = []

    class Started(Exception):
        pass

    def start_broker(backend: str | None, bootstrap: str | None) -> None:
        started.append(backend)
        raise Started

    monkeypatch.setattr(repro, "start_broker", start_broker)
    outside = _with_capture(tmp_path, "../secret.jsonl")
    assert cli.main(["repro", str(outside), "--backend", "emulator"]) == 2
    assert started == []
    with pytest.raises(repro.UntrustedJob, match=r"seed\[0\]\.capture is .*secret.jsonl, outside"):
        repro.check_captures_are_beside_it(load_scenario(outside), outside)
    link = outside.parent / "linked.jsonl"
    link.symlink_to(secret)
    linked = _with_capture(tmp_path, "linked.jsonl")
    with pytest.raises(repro.UntrustedJob, match="outside the scenario file's folder"):
        repro.check_captures_are_beside_it(load_scenario(linked), linked)
    beside = outside.parent / "beside.jsonl"
    beside.write_text(secret.read_text())
    inside = _with_capture(tmp_path, "beside.jsonl")
    repro.check_captures_are_beside_it(load_scenario(inside), inside)
    with pytest.raises(Started):
        cli.main(["repro", str(outside), "--backend", "emulator", "--trust"])
    assert started == ["emulator"]
