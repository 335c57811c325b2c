"""How kafkatest finds a job (``module:function``, ``path/to/file.py:function``) and calls it."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafkatest.brokers.base import Broker

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def load_job(spec: str) -> Callable[..., Any]:
    """The callable named by `spec`; a file path is imported under its stem."""
    target, sep, name = spec.rpartition(":")
    if not sep or not target or not name:
        raise ValueError(f"job {spec!r}: give module:function or path/to/file.py:function")
    if target.endswith(".py") or "/" in target:
        path = Path(target).resolve()
        module_name = f"kafkatest_job_{path.stem}"
        loaded = importlib.util.spec_from_file_location(module_name, path)
        if loaded is None or loaded.loader is None:
            raise ValueError(f"job {spec!r}: cannot import {path}")
        module = importlib.util.module_from_spec(loaded)
        sys.modules[module_name] = module
        loaded.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    job = getattr(module, name, None)
    if not callable(job):
        raise ValueError(f"job {spec!r}: {target} has no function {name!r}")
    return job


def job_name(job: Callable[..., Any] | str) -> str:
    """A job's ``module:function``, as reports name it."""
    if isinstance(job, str):
        return job
    return f"{getattr(job, '__module__', '?')}:{getattr(job, '__qualname__', repr(job))}"


def job_spec(job: Callable[..., Any]) -> str:
    """``module:function`` for a job passed as a function, so its own process can load it."""
    module, _, name = job_name(job).rpartition(":")
    if module in ("", "?", "None", "__main__") or "." in name or "<" in name:
        raise ValueError(
            f"process=True runs the job in its own process, which must import it: pass "
            f"'module:function' or 'path/to/file.py:function', not {job!r}"
        )
    return f"{module}:{name}"


def job_security(broker: Broker) -> dict[str, dict[str, str]]:
    """A secured broker's options for the job (its admin login), as ``kafka_options``;
    nothing on PLAINTEXT, so jobs without that parameter keep working."""
    if broker.security_runtime is None:
        return {}
    options = broker.spark_options()
    options.pop("kafka.bootstrap.servers")
    return {"kafka_options": options}


def start_job(
    job: Callable[..., Any] | str,
    spark: SparkSession,
    broker: Broker,
    source: str,
    sink: str,
    checkpoint: str | None,
    options: Mapping[str, str],
) -> Any:
    """Call `job` in this process as the contract says: with `checkpoint` for a stream
    (None: a batch job), and a secured broker's login as ``kafka_options``."""
    run = load_job(job) if isinstance(job, str) else job
    where = () if checkpoint is None else (checkpoint,)
    return run(
        spark,
        broker.bootstrap_servers,
        source,
        sink,
        *where,
        options=dict(options),
        **job_security(broker),
    )
