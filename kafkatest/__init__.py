"""kafkatest: test PySpark jobs that read from and write to Kafka.

The public API is small on purpose; see README.md for runnable examples.
"""

from kafkatest.brokers.base import Broker
from kafkatest.errors import BrokerError, KafkaTestError, SetupError, UnsupportedOperation
from kafkatest.records import Record

__all__ = [
    "Broker",
    "BrokerError",
    "KafkaTestError",
    "Record",
    "SetupError",
    "UnsupportedOperation",
]
__version__ = "0.1.0"
