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


SMALL_SUITE = """
import subprocess, sys

import pytest

def test_quick():
    # A test that runs a pytest of its own (as pytester does): only the outer run records.
    subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "tiers",
                    "-p", "no:cacheprovider", __file__], check=True, capture_output=True)

@pytest.mark.slow
def test_slow():
    pass

@pytest.mark.kafka
def test_on_kafka():
    pass

@pytest.mark.kafka
@pytest.mark.slow
def test_slow_on_kafka():
    pass
"""


def _recorded(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str) -> Path:
    """One run of the small suite with `args`, recorded: the record's path."""
    records = pytester.path / "records"
    folder = records / str(len(list(records.glob("*"))) if records.exists() else 0)
    monkeypatch.setenv("KAFKATEST_TIER_RECORD", str(folder))
    result = pytester.runpytest_subprocess("-p", "tiers", "--kafka-backend=emulator", *args)
    assert result.ret in (0, 5), result.stdout.str()[-2000:]
    (record,) = folder.glob("run-*.json")  # the run's own, none of a pytest it started
    return record


def _count_check(tmp_path: Path, *records: Path) -> subprocess.CompletedProcess[str]:
    """`python tests/tiers.py check` over a folder holding `records`."""
    folder = tmp_path / f"check{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    for number, record in enumerate(records):
        (folder / f"run-{number}.json").write_bytes(record.read_bytes())
    return subprocess.run(
        [sys.executable, str(ROOT / "tests" / "tiers.py"), "check", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.usefixtures("stand_in_java")  # PYTHONPATH: the tiers plugin importable
def test_the_count_check_passes_when_the_runs_make_the_suite_and_names_what_escaped(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """CI records its runs (KAFKATEST_TIER_RECORD) and checks that the fast tier and the
    rest tier's two lanes ran every collected test exactly once (.ci/run), but the
    tests BY_HAND names, which only `--tier=hand` runs."""
    pytester.makepyfile(test_small=SMALL_SUITE)
    pytester.makeconftest(
        "import tiers\ntiers.BY_HAND['test_small.py::test_slow_on_kafka'] = 'a run by hand'\n"
    )
    fast = _recorded(pytester, monkeypatch, "--tier=fast")
    rest_emulator = _recorded(pytester, monkeypatch, "--tier=rest", "-m", "not kafka")
    rest_kafka = _recorded(pytester, monkeypatch, "--tier=rest", "-m", "kafka")
    right = _count_check(tmp_path, fast, rest_emulator, rest_kafka)
    assert right.returncode == 0, right.stderr
    assert "1 + 1 + 1 + 1 by hand (--tier=hand) = 4 collected" in right.stdout
    hand = json.loads(_recorded(pytester, monkeypatch, "--tier=hand").read_text())
    assert hand["selected"] == hand["by_hand"] == ["test_small.py::test_slow_on_kafka"]

    # A lane whose selection leaves the slow emulator test out: it escaped both tiers.
    narrow = _recorded(pytester, monkeypatch, "--tier=rest", "-m", "not kafka and not slow")
    gap = _count_check(tmp_path, fast, narrow, rest_kafka)
    assert gap.returncode == 1
    assert "1 tests ran in no run, e.g. ['test_small.py::test_slow']" in gap.stderr

    # A test in two runs.
    quick = _recorded(pytester, monkeypatch, "--tier=all", "-k", "quick")
    twice = _count_check(tmp_path, fast, rest_emulator, rest_kafka, quick)
    assert twice.returncode == 1
    assert "ran in more than one run, e.g. ['test_small.py::test_quick']" in twice.stderr

    # Runs of different suites (a file added between them) are not compared.
    (pytester.path / "test_added.py").write_text("def test_new():\n    pass\n")
    other = _recorded(pytester, monkeypatch, "--tier=rest", "-m", "kafka")
    mixed = _count_check(tmp_path, fast, rest_emulator, other)
    assert mixed.returncode == 1 and "collected 4 of 5 tests" in mixed.stderr


def _described(item: pytest.Item) -> dict[str, object]:
    """What `_DUMP_PLUGIN` writes of an item, from the item itself."""
    callspec = getattr(item, "callspec", None)
    params = callspec.params.items() if callspec else ()
    return {
        "id": item.nodeid,
        "markers": sorted({mark.name for mark in item.iter_markers()}),
        "fixtures": list(getattr(item, "fixturenames", ())),
        "params": {name: str(getattr(value, "backend", value)) for name, value in params},
    }


@pytest.mark.slow
def test_every_test_carries_the_markers_its_fixtures_imply(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    """Over the whole suite: this run's own collection when it collected the whole suite
    (as CI's runs do), else a collection in a child pytest."""
    from tiers import whole_suite_collected

    collected = whole_suite_collected(pytestconfig)
    if collected is not None:
        items = [_described(item) for item in collected]
    else:
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
    # Each BY_HAND entry names a test of the rest tier (a stale or fast one would do nothing).
    from tiers import BY_HAND, by_hand_names

    named = {name for item in items for name in by_hand_names(str(item["id"]))}
    assert named == set(BY_HAND), f"BY_HAND names no test: {set(BY_HAND) - named}"
    fast_ids = {str(i["id"]) for i in fast if "smoke" not in i["markers"]}  # type: ignore[operator]
    assert not [i for i in fast_ids if by_hand_names(i)], "BY_HAND names a fast test"
    smoke = [i for i in items if "smoke" in i["markers"]]  # type: ignore[operator]
    assert sorted(str(i["params"].get("kafka_broker")) for i in smoke) == ["emulator", "kafka"]  # type: ignore[attr-defined]


def test_a_whole_suite_run_keeps_spark_tests_on_the_emulator_unless_listed(
    tmp_path: Path,
) -> None:
    """CI's runs (a tier, no `--spark-on-kafka`) run a Spark test on real Kafka only where
    SPARK_ON_KAFKA_IN_CI names it; paths given, or `--spark-on-kafka=all`, run it on both."""
    files = ("tests/test_sample_job.py", "tests/scenarios/test_records_deleted.py")

    def backends(*args: str) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for item in _collect(tmp_path, *files, *args):
            module = str(item["id"]).split("::")[0]
            found.setdefault(module, set()).add(item["params"]["kafka_broker"])  # type: ignore[index]
        return found

    both = {"emulator", "kafka"}
    ci = backends("--tier=rest")
    assert ci == {files[0]: {"emulator"}, files[1]: both}
    assert backends("--tier=all") == {files[0]: both, files[1]: both}
    assert backends("--tier=rest", "--spark-on-kafka=all") == {files[0]: both, files[1]: both}


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
