"""Process scenarios: the job runs in its own process, watched through its checkpoint,
so that an action can kill it mid-batch and start it again."""

from __future__ import annotations

import time

from kafkatest.jobs import JobOutcome, JobProcess
from kafkatest.scenarios.context import RunContext
from kafkatest.scenarios.plan import Plan
from kafkatest.scenarios.result import JobRun
from kafkatest.scenarios.steps import build_trigger, fire_before_start
from kafkatest.scenarios.triggers import Trigger
from kafkatest.scenarios.watch import CheckpointFeed, TriggerWatch


class _ProcessControl:
    """Actions' handle on a job process; remembers every process group it started."""

    def __init__(self, process: JobProcess, groups: list[int]) -> None:
        self.process = process
        self.groups = groups

    def kill(self) -> None:
        self.process.kill()

    def restart(self) -> None:
        self.process.kill()
        self.start()

    def start(self) -> None:
        self.process.start()
        if self.process.pid is not None:
            self.groups.append(self.process.pid)

    def stop(self) -> None:
        self.process.kill()


def run_process(plan: Plan, ctx: RunContext, checkpoint: str) -> tuple[JobRun, list[Trigger]]:
    if ctx.broker.security_runtime is not None:
        raise ValueError(
            "a job in its own process (mode: process) cannot be given a secured broker's "
            "options yet: run the scenario on a PLAINTEXT broker, or in-process"
        )
    timeout_s = plan.scenario.timeout_s
    bootstrap = ctx.broker.bootstrap_servers
    process = JobProcess(
        plan.scenario.job, bootstrap, plan.source, plan.sink, checkpoint, plan.options, timeout_s
    )
    control = _ProcessControl(process, ctx.process_groups)
    ctx.job = control
    feed = CheckpointFeed(checkpoint)
    baseline = sum(ctx.broker.latest_offsets(plan.sink).values())
    triggers = [build_trigger(step, ctx, feed, baseline) for step in plan.steps]
    watch: TriggerWatch | None = None
    with process:
        watched = fire_before_start(triggers)
        control.start()
        watch = TriggerWatch(watched, feed.latest).start()
        deadline = time.monotonic() + timeout_s * 2
        try:
            while time.monotonic() < deadline:
                if watch.error is not None:
                    return JobRun(
                        "failed", "ActionError", f"a fault action failed: {watch.error!r}"
                    ), triggers
                settled = not watch.acting and (watch.done or not process.running())
                if settled and not process.running():
                    break
                if settled and watch.done:
                    outcome = process.wait(max(1.0, deadline - time.monotonic()))
                    return _process_run(outcome), triggers
                time.sleep(0.1)
            else:
                return JobRun("timeout"), triggers
        finally:
            watch.stop()
        outcome = process.wait(5)
        return _process_run(outcome), triggers


def _process_run(outcome: JobOutcome) -> JobRun:
    return JobRun(outcome.status, outcome.error_class, outcome.error, outcome.conditions)
