"""kafkatest: test PySpark jobs that read from and write to Kafka.

The public API is small on purpose; see README.md for runnable examples. Brokers
come from `start_broker`, data goes in with `seed`, comes out with `topic_rows`,
and the `assert_*` functions check what a job delivered.
"""

from kafkatest.assertions import (
    DeliveryAssertionError,
    DeliveryReport,
    assert_at_least_once,
    assert_exactly_once,
    assert_expected_loss,
    assert_no_loss,
    assert_order_per_key,
)
from kafkatest.brokers.base import Broker
from kafkatest.brokers.registry import start_broker
from kafkatest.errors import BrokerError, KafkaTestError, SetupError, UnsupportedOperation
from kafkatest.records import Record
from kafkatest.seeding import SeedResult, fake_values, seed
from kafkatest.sinks import topic_rows

__all__ = [
    "Broker",
    "BrokerError",
    "DeliveryAssertionError",
    "DeliveryReport",
    "KafkaTestError",
    "Record",
    "SeedResult",
    "SetupError",
    "UnsupportedOperation",
    "assert_at_least_once",
    "assert_exactly_once",
    "assert_expected_loss",
    "assert_no_loss",
    "assert_order_per_key",
    "fake_values",
    "seed",
    "start_broker",
    "topic_rows",
]
__version__ = "0.1.0"
