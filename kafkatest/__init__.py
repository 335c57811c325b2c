"""kafkatest: test PySpark jobs that read from and write to Kafka.

The public API is small on purpose; see docs/ for runnable examples. Brokers
come from `start_broker`, data goes in with `seed`, comes out with `topic_rows`,
and the `assert_*` functions check what a job delivered.

PYTEST_DONT_REWRITE: pytest rewrites the asserts of an installed plugin's package as
it imports it, and warns when the package was imported first. `kafkatest pytest` runs
from a fork server that imported kafkatest before pytest (that is its point), so every
run warned. This package's own module holds no assert; its submodules are rewritten
as usual.
"""

import importlib
from typing import TYPE_CHECKING, Any

#: The release; pyproject.toml reads it from here (the one place it is written).
__version__ = "0.1.0"

if TYPE_CHECKING:
    from kafkatest.assertions import (
        DeliveryAssertionError,
        DeliveryReport,
        assert_at_least_once,
        assert_exactly_once,
        assert_expected_loss,
        assert_latency,
        assert_no_loss,
        assert_order_per_key,
    )
    from kafkatest.brokers.base import Broker
    from kafkatest.brokers.registry import start_broker
    from kafkatest.clocks import advance
    from kafkatest.errors import BrokerError, KafkaTestError, SetupError, UnsupportedOperation
    from kafkatest.oracles import (
        OracleAssertionError,
        OracleReport,
        assert_redelivery_invariant,
        assert_restart_invariant,
        assert_split_invariant,
    )
    from kafkatest.records import Record
    from kafkatest.seeding import SeedResult, fake_values
    from kafkatest.seeding.seed import seed
    from kafkatest.sinks import topic_rows

#: Where each public name lives. They are imported on first use (PEP 562), so that
#: loading the pytest plugin, which every pytest run of a project with kafkatest
#: installed does, does not import the assertions, seeding and Kafka clients.
_EXPORTS = {
    **dict.fromkeys(
        (
            "DeliveryAssertionError",
            "DeliveryReport",
            "assert_at_least_once",
            "assert_exactly_once",
            "assert_expected_loss",
            "assert_latency",
            "assert_no_loss",
            "assert_order_per_key",
        ),
        "kafkatest.assertions",
    ),
    "Broker": "kafkatest.brokers.base",
    "start_broker": "kafkatest.brokers.registry",
    "advance": "kafkatest.clocks",
    **dict.fromkeys(
        ("BrokerError", "KafkaTestError", "SetupError", "UnsupportedOperation"), "kafkatest.errors"
    ),
    **dict.fromkeys(
        (
            "OracleAssertionError",
            "OracleReport",
            "assert_redelivery_invariant",
            "assert_restart_invariant",
            "assert_split_invariant",
        ),
        "kafkatest.oracles",
    ),
    "Record": "kafkatest.records",
    **dict.fromkeys(("SeedResult", "fake_values", "seed"), "kafkatest.seeding"),
    "topic_rows": "kafkatest.sinks",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kafkatest' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = [
    "Broker",
    "BrokerError",
    "DeliveryAssertionError",
    "DeliveryReport",
    "KafkaTestError",
    "OracleAssertionError",
    "OracleReport",
    "Record",
    "SeedResult",
    "SetupError",
    "UnsupportedOperation",
    "advance",
    "assert_at_least_once",
    "assert_exactly_once",
    "assert_expected_loss",
    "assert_latency",
    "assert_no_loss",
    "assert_order_per_key",
    "assert_redelivery_invariant",
    "assert_restart_invariant",
    "assert_split_invariant",
    "fake_values",
    "seed",
    "start_broker",
    "topic_rows",
]
