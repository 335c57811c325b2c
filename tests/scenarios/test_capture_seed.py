"""A scenario file may seed a topic from a capture file (``kafkatest capture``): the path
is taken relative to the scenario file, checked when the file is loaded, and
``kafkatest repro`` gives the run a schema registry to register the capture's schemas in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafkatest.scenarios import repro
from kafkatest.scenarios.checks import ScenarioError
from kafkatest.scenarios.spec import load_scenario

FILE = """
name: from-a-capture
job: kafkatest.scenarios.jobs:copy_stream
topics: {{src: 2, sink: 1}}
source: src
sink: sink
seed:
  - {seed}
steps:
  - when: {{after_batch: 0}}
    do: [{{seed: {action}}}]
"""
GOOD_ACTION = "{label: later, topic: src, count: 2}"


def _write(folder: Path, seed: str, action: str = GOOD_ACTION) -> Path:
    path = folder / "scenario.yaml"
    path.write_text(FILE.format(seed=seed, action=action))
    return path


def test_a_capture_seed_is_found_beside_the_scenario_file(tmp_path: Path) -> None:
    (tmp_path / "incident.jsonl.gz").write_bytes(b"")
    scenario = load_scenario(
        _write(tmp_path, "{label: incident, topic: src, capture: incident.jsonl.gz}")
    )
    (spec,) = scenario.seed
    assert spec.capture == str(tmp_path / "incident.jsonl.gz")
    assert spec.to_data() == {"label": "incident", "topic": "src", "capture": spec.capture}


@pytest.mark.parametrize(
    ("seed", "action", "refusal"),
    [
        ("{label: a, topic: src, capture: gone.jsonl}", GOOD_ACTION, "seed[0].capture: no file"),
        ("{label: a, topic: src}", GOOD_ACTION, "give one source: count"),
        ("{label: a, topic: src, count: 3, capture: x}", GOOD_ACTION, "not count and capture"),
        ("{label: a, topic: src, capture: x, partition: 1}", GOOD_ACTION, "drop 'partition'"),
        ("{label: a, topic: src, count: 1}", "{label: b, topic: src}", "seed: give one source"),
    ],
)
def test_a_seed_without_exactly_one_source_is_refused(
    tmp_path: Path, seed: str, action: str, refusal: str
) -> None:
    with pytest.raises(ScenarioError, match=refusal.replace("[", r"\[").replace("]", r"\]")):
        load_scenario(_write(tmp_path, seed, action))


def test_repro_gives_a_capture_seed_a_schema_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "incident.jsonl.gz").write_bytes(b"")
    path = _write(tmp_path, "{label: incident, topic: src, capture: incident.jsonl.gz}")
    seen: dict[str, Any] = {}

    class _Broker:
        def close(self) -> None:
            seen["closed"] = True

    class _Result:
        ok = True

        def text(self) -> str:
            return "ran"

    def _run(scenario: Any, broker: Any, spark: Any, checkpoint: Any, **kw: Any) -> _Result:
        registry = kw.get("schema_registry")
        seen["registry"] = registry.url if registry is not None else None
        return _Result()

    monkeypatch.setattr(repro, "start_broker", lambda *a: _Broker())
    monkeypatch.setattr(repro, "run_scenario", _run)
    monkeypatch.setattr("kafkatest.spark.session.kafka_spark_session", lambda **kw: None)
    assert repro.run_repro(str(path), "emulator") == 0
    assert str(seen["registry"]).startswith("http://")
    assert seen["closed"]


def test_the_incident_page_shows_the_tested_example_its_job_and_its_file() -> None:
    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "how-to" / "reproduce-an-incident.md").read_text()
    test = (root / "tests" / "scenarios" / "test_incident_example.py").read_text()
    for text in (test, (root / "fixtures" / "jobs" / "incident_payments.py").read_text()):
        assert f"```python\n{text}```" in page
    scenario = test.split('SCENARIO = """', 1)[1].split('"""', 1)[0]
    shown = scenario.format(job="fixtures/jobs/incident_payments.py").strip()
    assert f"```yaml\n{shown}\n```" in page
