"""A scenario file that could not run is refused when loaded, and its job must be trusted.

Both checks happen before any broker or Spark starts: `kafkatest repro` exits 2
with the field (or the untrusted job) named, and runs no code from the file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkatest import cli
from kafkatest.scenarios import repro
from kafkatest.scenarios.spec import Scenario, ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parents[2]


def valid() -> dict[str, Any]:
    return {
        "name": "checked",
        "job": "kafkatest.scenarios.jobs:copy_stream",
        "topics": {"src": 2, "sink": 1},
        "source": "src",
        "sink": "sink",
        "seed": [{"label": "a", "topic": "src", "count": 3}],
        "steps": [
            {"when": {"after_batch": 0}, "do": [{"delete_records": {"topic": "src", "before": 1}}]},
            {"when": {"at_offsets": {"src": {"1": 3}}}, "do": ["broker_restart"]},
            {"do": [{"wait": {"seconds": 1}}]},
        ],
        "expect": {"outcome": "continues", "until": {"src": {"0": 3}}},
    }


def changed(path: str, value: object) -> dict[str, Any]:
    """`valid()` with the field at dotted `path` set to `value` (or removed, for DELETE)."""
    data = valid()
    *parents, last = path.split(".")
    node: Any = data
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if value is DELETE:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return data


DELETE = object()

BAD = [
    ("missing job", changed("job", DELETE), "missing field 'job' (the job to run: module:function"),
    ("job without a function", changed("job", "jobs.py"), "job must be module:function"),
    ("missing topics", changed("topics", DELETE), "missing field 'topics'"),
    ("unknown field", changed("steps_", []), "unknown field 'steps_' (did you mean 'steps'?)"),
    (
        "unknown action",
        changed("steps.0.do", [{"delete_record": {"topic": "src", "before": 1}}]),
        "steps[0].do[0]: unknown action 'delete_record' (did you mean 'delete_records'?)",
    ),
    (
        "unknown bare action",
        changed("steps.1.do", ["explode"]),
        "steps[1].do[0]: unknown action 'explode'; actions: add_latency, add_partitions",
    ),
    (
        "unknown trigger",
        changed("steps.0.when", {"after_batches": 0}),
        "steps[0].when: unknown trigger 'after_batches' (did you mean 'after_batch'?)",
    ),
    (
        "unknown trigger word",
        changed("steps.0.when", "at_start"),
        "steps[0].when: unknown trigger 'at_start'",
    ),
    (
        "negative batch",
        changed("steps.0.when", {"after_batch": -1}),
        "steps[0].when.after_batch: a batch id (0 or more), not -1",
    ),
    (
        "offsets of an undeclared topic",
        changed("steps.1.when", {"at_offsets": {"other": {"0": 1}}}),
        "steps[1].when.at_offsets: topic 'other' is not listed under topics",
    ),
    (
        "action argument missing",
        changed("steps.0.do", [{"delete_records": {"topic": "src"}}]),
        "steps[0].do[0].delete_records: missing argument(s) ['before']",
    ),
    (
        "action argument unknown",
        changed("steps.2.do", [{"wait": {"seconds": 1, "minutes": 2}}]),
        "steps[2].do[0].wait: unknown argument(s) ['minutes']; arguments: seconds",
    ),
    (
        "action on an undeclared topic",
        changed("steps.0.do", [{"delete_topic": {"topic": "sinkk"}}]),
        "steps[0].do[0].delete_topic: topic 'sinkk' is not listed under topics",
    ),
    (
        "negative wait",
        changed("steps.2.do", [{"wait": {"seconds": -1}}]),
        "steps[2].do[0].wait.seconds: a number of seconds from 0 to 3600, not -1",
    ),
    (
        "seed count as text",
        changed("steps.2.do", [{"seed": {"label": "b", "topic": "src", "count": "many"}}]),
        "steps[2].do[0].seed.count: a whole number from 0 to 1000000, not 'many'",
    ),
    (
        "no partitions",
        changed("steps.2.do", [{"add_partitions": {"topic": "src", "total": 0}}]),
        "steps[2].do[0].add_partitions.total: a whole number of at least 1, not 0",
    ),
    (
        "offsets that are not numbers",
        changed("steps.0.do", [{"delete_records": {"topic": "src", "before": {"0": "x"}}}]),
        "steps[0].do[0].delete_records.before: an offset (-1: up to the high watermark)",
    ),
    (
        "step without do",
        changed("steps.2", {"when": "before_start"}),
        "steps[2] must be a mapping with 'do'",
    ),
    (
        "seed without a source",
        changed("seed.0", {"label": "a", "topic": "src"}),
        "seed[0]: give one source: count (how many records {label, n} to generate) or capture",
    ),
    (
        "zero partitions",
        changed("topics.src", 0),
        "topics.src: a topic has 1 to 10000 partitions, not 0",
    ),
    (
        "unknown expectation",
        changed("expect.outcom", "fails"),
        "expect: unknown field(s) ['outcom']",
    ),
]


@pytest.mark.parametrize(("data", "says"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_scenario_that_could_not_run_is_refused_when_loaded(
    tmp_path: Path, data: dict[str, Any], says: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))

    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)

    assert str(refused.value).startswith(f"{path}: ")
    assert says in str(refused.value)


def test_the_valid_base_and_the_shipped_file_load(tmp_path: Path) -> None:
    path = tmp_path / "good.yaml"
    path.write_text(yaml.safe_dump(valid()))
    assert load_scenario(path).steps[1].do == [{"broker_restart": {}}]
    assert load_scenario(ROOT / "fixtures" / "scenarios" / "records-deleted-fail-false.yaml")


def test_a_scenario_built_in_python_is_checked_too() -> None:
    with pytest.raises(ScenarioError, match=r"steps\[0\]\.do\[0\]: unknown action 'nuke'"):
        Scenario.from_data(changed("steps.0.do", [{"nuke": {}}]))


def _repro(path: Path, *extra: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "kafkatest.cli",
            "repro",
            str(path),
            "--backend",
            "emulator",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_repro_refuses_a_bad_file_before_anything_starts(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(changed("job", DELETE)))

    done = _repro(path, cwd=tmp_path)

    assert done.returncode == 2
    assert "missing field 'job'" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def _job_elsewhere(tmp_path: Path) -> tuple[Path, Path]:
    """A job file outside the scenario's directory and the working directory; its marker."""
    elsewhere, here, work = tmp_path / "elsewhere", tmp_path / "scenarios", tmp_path / "work"
    for folder in (elsewhere, here, work):
        folder.mkdir()
    marker = tmp_path / "job-ran"
    (elsewhere / "evil.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n"
        "def job(*args, **kwargs):\n    raise SystemExit('ran')\n"
    )
    return elsewhere / "evil.py", marker


@pytest.mark.parametrize("job", ["os:system", "json:loads", "{elsewhere}:job"])
def test_repro_refuses_a_job_from_elsewhere_without_running_it(tmp_path: Path, job: str) -> None:
    evil, marker = _job_elsewhere(tmp_path)
    path = tmp_path / "scenarios" / "s.yaml"
    path.write_text(yaml.safe_dump(changed("job", job.format(elsewhere=evil))))

    done = _repro(path, cwd=tmp_path / "work")

    assert done.returncode == 2, done.stderr
    assert "A scenario file is code" in done.stderr
    assert "run again with --trust" in done.stderr
    assert f"outside the scenario file's directory ({path.parent})" in done.stderr
    assert not marker.exists()
    assert "Traceback" not in done.stderr


def test_jobs_beside_the_file_in_the_project_or_kafkatest_s_own_are_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evil, _marker = _job_elsewhere(tmp_path)
    here = tmp_path / "scenarios"
    (here / "mine.py").write_text("def job(*args, **kwargs): pass\n")
    (tmp_path / "work" / "project_jobs.py").write_text("def job(*args, **kwargs): pass\n")
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.syspath_prepend(str(tmp_path / "work"))
    for job in (
        f"{here / 'mine.py'}:job",
        "project_jobs:job",
        "../work/project_jobs.py:job",
        "kafkatest.scenarios.jobs:copy_stream",
    ):
        scenario = Scenario.from_data(changed("job", job))
        repro.check_job_is_trusted(scenario, here / "s.yaml")
    with pytest.raises(repro.UntrustedJob):
        repro.check_job_is_trusted(
            Scenario.from_data(changed("job", f"{evil}:job")), here / "s.yaml"
        )


def test_installed_code_under_the_project_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project's .venv (or a working directory of $HOME holding one) does not make
    the packages installed there trusted jobs."""
    venv = tmp_path / "work" / ".venv"
    package = venv / "lib" / "python3.11" / "site-packages" / "somepkg"
    package.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (package / "__init__.py").write_text("def job(*args, **kwargs): pass\n")
    loose = venv / "bin" / "tool.py"  # inside the virtualenv, not in site-packages
    loose.parent.mkdir()
    loose.write_text("def job(*args, **kwargs): pass\n")
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.syspath_prepend(str(package.parent))
    for job in ("somepkg:job", f"{loose}:job"):
        with pytest.raises(repro.UntrustedJob, match="installed code"):
            repro.check_job_is_trusted(
                Scenario.from_data(changed("job", job)), tmp_path / "work" / "s.yaml"
            )


def test_trust_lets_repro_go_on_to_start_the_broker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evil, _marker = _job_elsewhere(tmp_path)
    path = tmp_path / "scenarios" / "s.yaml"
    path.write_text(yaml.safe_dump(changed("job", f"{evil}:job")))
    started: list[str | None] = []

    class Started(Exception):
        pass

    def start_broker(backend: str | None, bootstrap: str | None) -> None:
        started.append(backend)
        raise Started

    monkeypatch.setattr(repro, "start_broker", start_broker)

    assert cli.main(["repro", str(path), "--backend", "emulator"]) == 2
    assert started == []
    with pytest.raises(Started):
        cli.main(["repro", str(path), "--backend", "emulator", "--trust"])
    assert started == ["emulator"]


def test_repro_help_says_a_scenario_file_is_code(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["repro", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "A scenario file is code" in text
    assert "--trust" in text
