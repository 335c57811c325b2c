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

from typing import TYPE_CHECKING

from kafkatest._ground.lean_imports import imported_on_use

#: The release; pyproject.toml reads it from here (the one place it is written).
__version__ = "0.1.0"

if TYPE_CHECKING:
    # `X as X`: re-exported for type checkers (the names are loaded lazily below).
    from kafkatest.assertions import (
        DeliveryAssertionError as DeliveryAssertionError,
        DeliveryReport as DeliveryReport,
        assert_at_least_once as assert_at_least_once,
        assert_exactly_once as assert_exactly_once,
        assert_expected_loss as assert_expected_loss,
        assert_latency as assert_latency,
        assert_no_loss as assert_no_loss,
        assert_order_per_key as assert_order_per_key,
    )
    from kafkatest.brokers.base import Broker as Broker
    from kafkatest.brokers.registry import start_broker as start_broker
    from kafkatest.clocks import advance as advance
    from kafkatest.errors import (
        BrokerError as BrokerError,
        KafkaTestError as KafkaTestError,
        SetupError as SetupError,
        UnsupportedOperation as UnsupportedOperation,
    )
    from kafkatest.oracles import (
        OracleAssertionError as OracleAssertionError,
        OracleReport as OracleReport,
        assert_redelivery_invariant as assert_redelivery_invariant,
        assert_restart_invariant as assert_restart_invariant,
        assert_split_invariant as assert_split_invariant,
    )
    from kafkatest.records import Record as Record
    from kafkatest.seeding import SeedResult as SeedResult, fake_values as fake_values
    from kafkatest.seeding.seed import seed as seed
    from kafkatest.sinks import topic_rows as topic_rows

#: Where each public name lives. They are imported on first use (PEP 562), so that
#: loading the pytest plugin, which every pytest run of a project with kafkatest
#: installed does, does not import the assertions, seeding and Kafka clients.
_FACE: dict[str, tuple[str, ...]] = {
    "kafkatest.assertions": (
        "DeliveryAssertionError",
        "DeliveryReport",
        "assert_at_least_once",
        "assert_exactly_once",
        "assert_expected_loss",
        "assert_latency",
        "assert_no_loss",
        "assert_order_per_key",
    ),
    "kafkatest.brokers.base": ("Broker",),
    "kafkatest.brokers.registry": ("start_broker",),
    "kafkatest.clocks": ("advance",),
    "kafkatest.errors": ("BrokerError", "KafkaTestError", "SetupError", "UnsupportedOperation"),
    "kafkatest.oracles": (
        "OracleAssertionError",
        "OracleReport",
        "assert_redelivery_invariant",
        "assert_restart_invariant",
        "assert_split_invariant",
    ),
    "kafkatest.records": ("Record",),
    "kafkatest.seeding": ("SeedResult", "fake_values", "seed"),
    "kafkatest.sinks": ("topic_rows",),
}
#: Each public name, in the order the API reference shows them.
_EXPORTS = tuple(name for names in _FACE.values() for name in names)
__all__ = sorted(_EXPORTS)
__getattr__ = imported_on_use(__name__, _FACE)


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
