"""The job under test: what kafkatest calls, how it finds one, how it runs one apart.

A streaming job is ``job(spark, bootstrap, source, sink, checkpoint, *, options)``
returning its StreamingQuery; a batch job is ``job(spark, bootstrap, source, sink, *,
options)``. On a secured broker it is also given ``kafka_options`` (the broker's login,
`job_security`). Named as ``module:function`` or ``path/to/file.py:function``
(`load_job`), a streaming job can run in its own process (`JobProcess`, ``python -m
kafkatest.jobs.child``), which a test kills mid-batch and starts again on its checkpoint.
Scenarios (`kafkatest.scenarios`) and oracles (`kafkatest.oracles`) run jobs through these.
"""

from kafkatest.jobs.contract import job_name, job_security, job_spec, load_job, start_job
from kafkatest.jobs.process import JobOutcome, JobProcess, kill_all_jobs, live_members

__all__ = [
    "JobOutcome",
    "JobProcess",
    "job_name",
    "job_security",
    "job_spec",
    "kill_all_jobs",
    "live_members",
    "load_job",
    "start_job",
]
