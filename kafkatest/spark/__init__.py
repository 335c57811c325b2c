"""Local PySpark with the real Kafka connector attached, and helpers to run queries."""

from kafkatest.spark.clock import QueryClock, QueryClockError, query_clock
from kafkatest.spark.queries import QueryTimeout, wait_for_query, wait_for_rows
from kafkatest.spark.real_time import check_real_time_slots, task_slots
from kafkatest.spark.session import (
    kafka_spark_session,
    release_kafka_clients,
    stop_spark_session,
)

__all__ = [
    "QueryClock",
    "QueryClockError",
    "QueryTimeout",
    "check_real_time_slots",
    "kafka_spark_session",
    "query_clock",
    "release_kafka_clients",
    "stop_spark_session",
    "task_slots",
    "wait_for_query",
    "wait_for_rows",
]
