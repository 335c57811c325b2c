"""The suite's tiers (tests/tiers.py): markers follow from fixtures, the two tiers make
the whole suite, and a fast test that starts a JVM is caught."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Writes what collection saw, before any tier selection, as JSON lines.
_DUMP_PLUGIN = """
import json, os
import pytest

@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    result = yield  # after every other plugin's markers and selection
    with open(os.environ["TIER_DUMP"], "w") as out:
        for item in items:
            callspec = getattr(item, "callspec", None)
            params = {k: str(getattr(v, "backend", v)) for k, v in
                      (callspec.params.items() if callspec else ())}
            out.write(json.dumps({
                "id": item.nodeid,
                "markers": sorted({m.name for m in item.iter_markers()}),
                "fixtures": list(getattr(item, "fixturenames", ())),
                "params": params,
            }) + "\\n")
    return result
"""


def _collect(tmp_path: Path, *args: str) -> list[dict[str, object]]:
    plugin_dir = tmp_path / "plugin"
    plugin_dir.mkdir(exist_ok=True)
    (plugin_dir / "tier_dump.py").write_text(_DUMP_PLUGIN)
    dump = tmp_path / f"dump{len(list(tmp_path.iterdir()))}.jsonl"
    env = {
        **os.environ,
        "TIER_DUMP": str(dump),
        "PYTHONPATH": os.pathsep.join([str(plugin_dir), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "tier_dump",
            "-p",
            "no:cacheprovider",
            *args,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode in (0, 5), done.stdout[-3000:] + done.stderr[-3000:]
    return [json.loads(line) for line in dump.read_text().splitlines()]


def _selected(tmp_path: Path, tier: str) -> set[str]:
    """Node ids `--tier=<tier>` runs."""
    return {str(item["id"]) for item in _collect(tmp_path, f"--tier={tier}")}


@pytest.mark.slow
def test_fast_and_rest_make_the_whole_suite(tmp_path: Path) -> None:
    """The count check: every collected test is in exactly one tier."""
    everything = _selected(tmp_path, "all")
    fast, rest = _selected(tmp_path, "fast"), _selected(tmp_path, "rest")
    assert fast and rest
    assert not fast & rest, f"in both tiers: {sorted(fast & rest)[:10]}"
    missing = everything - fast - rest
    assert not missing, f"in neither tier: {sorted(missing)[:10]}"
    assert fast | rest == everything, f"only in a tier: {sorted((fast | rest) - everything)[:10]}"


@pytest.mark.slow
def test_every_test_carries_the_markers_its_fixtures_imply(tmp_path: Path) -> None:
    items = _collect(tmp_path, "--tier=all")
    assert len(items) > 1000
    wrong = []
    for item in items:
        markers = set(item["markers"])  # type: ignore[arg-type]
        fixtures = set(item["fixtures"])  # type: ignore[arg-type]
        params = item["params"].values()  # type: ignore[attr-defined]
        if "spark_session" in fixtures and "spark" not in markers:
            wrong.append((item["id"], "uses Spark, not marked spark"))
        if "kafka" in params and "kafka" not in markers:
            wrong.append((item["id"], "runs on real Kafka, not marked kafka"))
        if "smoke" not in markers and "kafka" in markers and "slow" not in markers:
            pass  # a kafka test is out of the fast tier by its kafka marker alone
    assert not wrong, wrong[:20]
    fast = [i for i in items if not {"kafka", "spark", "slow"} & set(i["markers"])]  # type: ignore[arg-type]
    assert fast, "the fast tier is not empty"
    smoke = [i for i in items if "smoke" in i["markers"]]  # type: ignore[operator]
    assert sorted(str(i["params"].get("kafka_broker")) for i in smoke) == ["emulator", "kafka"]  # type: ignore[attr-defined]


@pytest.fixture
def stand_in_java(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `java` on PATH that sleeps a moment (so the poller sees it) and exits, and
    this folder importable, for pytest runs of the tiers plugin."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    java = bin_dir / "java"
    java.write_text("#!/bin/sh\nsleep 0.6\nexit 0\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))


@pytest.mark.tier_guard_exempt("its pytest runs start a stand-in `java`")
@pytest.mark.usefixtures("stand_in_java")
def test_a_fast_test_that_starts_a_jvm_fails_with_its_name(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_sneaky="""
        import subprocess

        def test_direct():
            subprocess.run(["java", "-version"], check=True)

        def test_through_a_shell():
            subprocess.run("sh -c 'java -cp x kafka.tools.Other'", shell=True, check=True)

        def test_innocent():
            subprocess.run(["sh", "-c", "true"], check=True)
        """
    )
    result = pytester.runpytest_subprocess("-p", "tiers", "--tier=fast", "--kafka-backend=emulator")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*test_direct*is in the fast tier*", "*started java*"])
    result.stdout.fnmatch_lines(
        ["*test_through_a_shell*is in the fast tier*", "*kafka.tools.Other*"]
    )
    assert "test_innocent is in the fast tier" not in result.stdout.str()


@pytest.mark.tier_guard_exempt("its pytest runs start a stand-in `java`")
@pytest.mark.usefixtures("stand_in_java")
def test_an_emulator_only_run_refuses_a_kafka_broker_jvm(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_broker="""
        import subprocess
        import pytest

        @pytest.mark.slow
        def test_slow_but_starts_kafka():
            subprocess.run(["java", "-cp", "x", "kafka.Kafka", "server.properties"], check=True)
        """
    )
    emulator_only = pytester.runpytest_subprocess(
        "-p", "tiers", "--tier=all", "--kafka-backend=emulator"
    )
    emulator_only.assert_outcomes(failed=1)
    emulator_only.stdout.fnmatch_lines(["*a Kafka broker JVM, in a run without the kafka backend*"])
    with_kafka = pytester.runpytest_subprocess(
        "-p", "tiers", "--tier=all", "--kafka-backend=emulator,kafka"
    )
    with_kafka.assert_outcomes(passed=1)
