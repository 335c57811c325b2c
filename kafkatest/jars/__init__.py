"""JVM artifacts from Maven Central: Spark's Kafka connector (and, for PySpark 3.5,
Spark Connect's server) and Apache Kafka's broker.

Nothing is bundled: jars are resolved with the ordinary Maven client on first use
and cached per user, so a later run (or a machine without network) uses the cache.
"""

from kafkatest.jars.coordinates import (
    DEFAULT_KAFKA_VERSION,
    kafka_broker_coordinates,
    spark_connector_coordinate,
)
from kafkatest.jars.resolve import (
    kafka_broker_jars,
    spark_connect_server_jars,
    spark_connector_jars,
)

__all__ = [
    "DEFAULT_KAFKA_VERSION",
    "kafka_broker_coordinates",
    "kafka_broker_jars",
    "spark_connect_server_jars",
    "spark_connector_coordinate",
    "spark_connector_jars",
]
