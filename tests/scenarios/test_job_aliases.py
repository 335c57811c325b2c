"""The job's names moved to `kafkatest.jobs`; the old paths still give the same objects:
`kafkatest.scenarios` without a warning (its public face), the old module
`kafkatest.scenarios.process` with a DeprecationWarning naming the new home."""

from __future__ import annotations

import warnings

import pytest

import kafkatest.jobs as jobs


def test_the_scenarios_package_still_exports_the_job_process_silently() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from kafkatest.scenarios import JobOutcome, JobProcess, kill_all_jobs

    assert (JobOutcome, JobProcess, kill_all_jobs) == (
        jobs.JobOutcome,
        jobs.JobProcess,
        jobs.kill_all_jobs,
    )


def test_the_old_module_path_warns_and_gives_the_same_class() -> None:
    with pytest.warns(DeprecationWarning, match="import it from kafkatest.jobs"):
        from kafkatest.scenarios.process import JobProcess
    assert JobProcess is jobs.JobProcess
    with pytest.raises(AttributeError):
        from kafkatest.scenarios import process

        process.not_a_name  # noqa: B018


def test_a_job_function_is_named_for_its_own_process() -> None:
    from kafkatest.scenarios.jobs import copy_stream

    assert jobs.job_spec(copy_stream) == "kafkatest.scenarios.jobs:copy_stream"
    assert jobs.job_name("m:f") == "m:f"
    with pytest.raises(ValueError, match="must import it"):
        jobs.job_spec(lambda: None)


def test_the_old_loading_module_warns_and_gives_load_job() -> None:
    with pytest.warns(DeprecationWarning, match="load_job moved: import it from kafkatest.jobs"):
        from kafkatest.scenarios.loading import load_job
    assert load_job is jobs.load_job
