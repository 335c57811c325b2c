"""``kafkatest repro FILE``: replay a saved scenario on a broker of its own.

Exit status 0 when the scenario's expectations held, 1 when not; the printed
report says what Spark did and what reached the sink either way.

A scenario file is code: its ``job`` names a Python function that repro imports
and runs. So repro runs only jobs that live beside the file (its directory) or in
the current project (the working directory), or kafkatest's own sample jobs;
anything else, say ``os:system``, a module in site-packages or in a virtualenv (even
one inside the project), needs ``--trust``; so does a capture file outside the scenario
file's folder.
The job is located without importing it, so a refused file runs no code at all.
"""

from __future__ import annotations

import importlib.machinery
import sys
import tempfile
from pathlib import Path

from kafkatest.brokers.registry import start_broker
from kafkatest.errors import KafkaTestError
from kafkatest.scenarios.runner import run_scenario
from kafkatest.scenarios.spec import Scenario, load_scenario

#: kafkatest's own jobs, safe to run from any file.
TRUSTED_MODULES = ("kafkatest.scenarios.jobs",)


class UntrustedJob(KafkaTestError):
    """The scenario's job, or a capture it reads, lives outside the places repro takes
    code and data from unasked."""


def run_repro(
    path: str, backend: str | None = None, bootstrap: str | None = None, trust: bool = False
) -> int:
    """Run the scenario in `path` on a fresh broker and print its report."""
    scenario = load_scenario(path)
    if not trust:
        check_job_is_trusted(scenario, Path(path))
        check_captures_are_beside_it(scenario, Path(path))
    spark = None
    registry = None
    broker = start_broker(backend, bootstrap)
    try:
        if any(spec.capture is not None for spec in scenario.seed):
            # A capture's Avro values are registered again in a registry of the run's own.
            from kafkatest.schema_registry import SchemaRegistryServer

            registry = SchemaRegistryServer().start()
        if scenario.mode != "process":
            from kafkatest.spark.session import kafka_spark_session

            spark = kafka_spark_session(app_name=f"kafkatest-repro-{scenario.name}")
        with tempfile.TemporaryDirectory(prefix="kafkatest-repro-") as scratch:
            checkpoint = Path(scratch) / "checkpoint"
            result = run_scenario(scenario, broker, spark, checkpoint, schema_registry=registry)
        print(result.text())
        return 0 if result.ok else 1
    finally:
        if spark is not None:
            from kafkatest.spark.session import stop_spark_session

            stop_spark_session(spark)
        if registry is not None:
            registry.close()
        broker.close()


def check_job_is_trusted(scenario: Scenario, path: Path) -> None:
    """Refuse a job outside the scenario file's directory and the working directory."""
    target = scenario.job.rpartition(":")[0]
    if target in TRUSTED_MODULES:
        return
    roots = [path.resolve().parent, Path.cwd().resolve()]
    location = job_file(target)
    if (
        location is not None
        and any(location.is_relative_to(root) for root in roots)
        and not installed_code(location)
    ):
        return
    where = "cannot be found" if location is None else f"is {location}"
    if location is not None and installed_code(location):
        where += " (installed code: a virtualenv or site-packages under it)"
    raise UntrustedJob(
        f"{path}: the scenario's job {scenario.job!r} {where}, outside the scenario file's "
        f"directory ({roots[0]}) and the current project ({roots[1]}). A scenario file is code: "
        "repro would import and run that function. Read the file, and if you trust it run "
        "again with --trust"
    )


def check_captures_are_beside_it(scenario: Scenario, path: Path) -> None:
    """Refuse a capture file outside the scenario file's folder: a file from elsewhere
    must not make repro read, and write into a topic, whatever a path names (``capture:
    ../secret.json``, or a link inside the folder pointing out of it)."""
    folder = path.resolve().parent
    for i, spec in enumerate(scenario.seed):
        if spec.capture is None:
            continue
        found = Path(spec.capture).resolve()
        if not found.is_relative_to(folder):
            raise UntrustedJob(
                f"{path}: seed[{i}].capture is {found}, outside the scenario file's folder "
                f"({folder}). repro reads only data beside the file: move the capture there, "
                "or, if you trust the file, run again with --trust"
            )


def installed_code(location: Path) -> bool:
    """Whether `location` is installed code, not the project's: in site-packages or
    dist-packages, or inside a virtualenv (a directory holding ``pyvenv.cfg``). A
    project's ``.venv``, or a working directory of $HOME, must not make every
    installed package a trusted job."""
    if {"site-packages", "dist-packages"} & set(location.parts):
        return True
    return any((parent / "pyvenv.cfg").is_file() for parent in location.parents)


def job_file(target: str) -> Path | None:
    """The file a job's module or path names, found without importing anything."""
    if target.endswith(".py") or "/" in target:
        return Path(target).resolve()
    loaded = sys.modules.get(target)
    if loaded is not None:
        origin = getattr(loaded, "__file__", None)
        return None if origin is None else Path(origin).resolve()
    search: list[str] | None = list(sys.path)  # where the import will look, in its order
    spec = None
    for part in target.split("."):
        if search is None or not part.isidentifier():
            return None
        spec = importlib.machinery.PathFinder.find_spec(part, search)
        if spec is None:
            return None
        locations = spec.submodule_search_locations
        search = None if locations is None else list(locations)
    if spec is None or spec.origin is None or spec.origin in ("built-in", "frozen"):
        return None
    return Path(spec.origin).resolve()
