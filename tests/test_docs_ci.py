"""The CI examples users copy into their repositories parse and do what the docs say.

docs/ci/*.yml are included verbatim into the xdist-and-CI page; a workflow missing
Java, the jar cache, `pytest -n auto` or the report upload would cost every user who
copied it a slow or opaque CI run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

DOCS = Path(__file__).resolve().parent.parent / "docs"


def load(name: str) -> Any:
    return yaml.safe_load((DOCS / "ci" / name).read_text())


def test_the_github_workflow_sets_up_java_caches_jars_and_uploads_reports() -> None:
    workflow = load("github-actions.yml")
    steps = workflow["jobs"]["pytest"]["steps"]
    uses = [step.get("uses", "").split("@")[0] for step in steps]
    for action in ("actions/setup-java", "actions/cache", "actions/upload-artifact"):
        assert action in uses, action
    java = steps[uses.index("actions/setup-java")]["with"]
    assert int(java["java-version"]) >= 17
    assert "~/.cache/kafkatest" in steps[uses.index("actions/cache")]["with"]["path"]
    upload = steps[uses.index("actions/upload-artifact")]
    assert upload["if"] == "always()" and "kafkatest-reports/" in upload["with"]["path"]
    runs = [step.get("run", "") for step in steps]
    assert any("pytest -n auto" in run for run in runs)
    assert any("pytest-xdist" in run for run in runs), "the base install has no xdist"


def test_the_gitlab_job_installs_java_caches_jars_and_keeps_reports() -> None:
    job = load("gitlab-ci.yml")["pytest"]
    assert "openjdk-17" in " ".join(job["before_script"])
    assert any("pytest-xdist" in line for line in job["before_script"])
    assert job["variables"]["KAFKATEST_CACHE_DIR"].endswith(".cache/kafkatest")
    assert ".cache/kafkatest" in job["cache"]["paths"]
    assert any("pytest -n auto" in line for line in job["script"])
    assert job["artifacts"]["when"] == "always"
    assert "kafkatest-reports/" in job["artifacts"]["paths"]


def test_the_ci_page_includes_both_files() -> None:
    page = (DOCS / "how-to" / "xdist-ci.md").read_text()
    for name in ("github-actions.yml", "gitlab-ci.yml"):
        assert f'--8<-- "docs/ci/{name}"' in page
