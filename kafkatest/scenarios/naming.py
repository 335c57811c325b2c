"""A scenario's topics under this run's names, and the job options that mention them.

Logical names (``source``, ``sink``) stay in the scenario file; each run gets unique
real names, so runs share a broker without seeing each other's records.
"""

from __future__ import annotations

import re
import uuid

from kafkatest.scenarios.spec import Scenario


def real_topic_names(scenario: Scenario) -> dict[str, str]:
    """Unique topic names for this run, readable in broker logs."""
    slug = re.sub(r"[^A-Za-z0-9-]+", "-", scenario.name)[:40].strip("-") or "scenario"
    run = uuid.uuid4().hex[:6]
    return {logical: f"kt-{slug}-{logical}-{run}" for logical in scenario.topics}


def resolved_options(scenario: Scenario, names: dict[str, str]) -> dict[str, str]:
    """Option values with ``{topic}`` replaced by the real name.

    Real names hold only letters, digits, ``.``, ``_`` and ``-``, so they read the
    same inside a ``subscribePattern`` regex and inside ``endingOffsets`` JSON.
    """
    out = {}
    for key, value in scenario.options.items():
        for logical, real in names.items():
            value = value.replace("{" + logical + "}", real)
        out[key] = value
    return out
