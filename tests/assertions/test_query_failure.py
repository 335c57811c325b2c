"""assert_query_failed: a failure named by its data-loss reason, Spark condition or Kafka error."""

from __future__ import annotations

import pytest

from kafkatest.assertions import assert_query_failed, query_failure
from kafkatest.seeding import seed
from kafkatest.spark.errors import DATA_LOSS, data_loss_message, spark_major

#: What PySpark 4.x shows a test for an executor-side data loss (the issue's example).
STREAM_FAILED_TEXT = (
    "[STREAM_FAILED] Query [id = 1, runId = 2] terminated with exception: "
    f"{DATA_LOSS}. Reason: Could not read records in offset [10, 20) for topic partition t-0"
)


def test_a_data_loss_reason_is_recognised_from_the_text_alone():
    """Spark Connect and PySpark's message carry no condition: the message stem names it."""
    failure = assert_query_failed(
        RuntimeError(STREAM_FAILED_TEXT), "COULD_NOT_READ_OFFSET_RANGE", message="[10, 20)"
    )
    assert failure.data_loss == ["COULD_NOT_READ_OFFSET_RANGE"]
    assert_query_failed(
        RuntimeError(STREAM_FAILED_TEXT), "KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE"
    )
    assert_query_failed(RuntimeError(STREAM_FAILED_TEXT), "KAFKA_DATA_LOSS")


def test_a_mismatch_quotes_the_useful_lines():
    error = RuntimeError(STREAM_FAILED_TEXT + "\n\tat org.apache.spark.Foo.bar(Foo.scala:1)")
    with pytest.raises(AssertionError) as raised:
        assert_query_failed(error, "PARTITIONS_DELETED")
    text = str(raised.value)
    assert "expected the failure to be 'PARTITIONS_DELETED'" in text
    assert "data loss (Spark 4 terms): COULD_NOT_READ_OFFSET_RANGE" in text
    assert "Could not read records in offset [10, 20)" in text


def test_kafka_exceptions_named_by_a_caused_by_line_match_short_or_qualified():
    error = RuntimeError(
        "Job aborted.\nCaused by: org.apache.kafka.common.errors.TopicAuthorizationException: "
        "Not authorized to access topics: [orders]"
    )
    failure = assert_query_failed(error, "TopicAuthorizationException", message="[orders]")
    assert failure.causes == [
        "org.apache.kafka.common.errors.TopicAuthorizationException: "
        "Not authorized to access topics: [orders]"
    ]
    assert_query_failed(error, "org.apache.kafka.common.errors.TopicAuthorizationException")
    with pytest.raises(AssertionError, match="SaslAuthenticationException"):
        assert_query_failed(error, "SaslAuthenticationException")
    with pytest.raises(AssertionError, match="expected the failure to be"):
        assert_query_failed(error, "kafka.TopicAuthorizationException")


def test_a_query_without_an_error_fails_the_assertion():
    class FinishedQuery:
        def exception(self) -> None:
            return None

    assert query_failure(FinishedQuery()) is None
    with pytest.raises(AssertionError, match="has no error"):
        assert_query_failed(FinishedQuery(), "COULD_NOT_READ_OFFSET_RANGE")
    with pytest.raises(TypeError, match="StreamingQuery or an exception"):
        assert_query_failed(42)
    # An error's text is taken as the failure (e.g. a log line, or Spark Connect's text).
    assert_query_failed(STREAM_FAILED_TEXT, "COULD_NOT_READ_OFFSET_RANGE")


@pytest.mark.spark
def test_a_real_batch_data_loss_is_named_by_its_condition(spark, kafka_broker, kafka_topic):
    """endingOffsets past the log end with failOnDataLoss=true: Spark's own exception."""
    topic = kafka_topic()
    seed(kafka_broker, topic, [{"n": i} for i in range(5)])
    with pytest.raises(Exception) as raised:
        (
            spark.read.format("kafka")
            .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
            .option("subscribe", topic)
            .option("endingOffsets", f'{{"{topic}": {{"0": 50}}}}')
            .option("kafkaConsumer.pollTimeoutMs", "5000")
            .load()
            .collect()
        )
    failure = assert_query_failed(
        raised.value,
        "COULD_NOT_READ_OFFSET_RANGE",
        message=data_loss_message("COULD_NOT_READ_OFFSET_RANGE", start=5, end=50),
    )
    if spark_major() >= 4:  # 3.5 throws a bare IllegalStateException: no condition
        assert "KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE" in failure.conditions
    with pytest.raises(AssertionError) as mismatch:
        assert_query_failed(raised.value, "PARTITION_OFFSET_CHANGED")
    assert "data loss (Spark 4 terms): COULD_NOT_READ_OFFSET_RANGE" in str(mismatch.value)


@pytest.mark.spark
def test_a_real_kafka_client_error_is_named_by_its_exception(spark, kafka_broker, kafka_topic):
    """A sink record larger than the producer allows: the Kafka client's exception, by name."""
    topic = kafka_topic()
    frame = spark.createDataFrame([("k", "x" * 5000)], "key string, value string")
    with pytest.raises(Exception) as raised:
        (
            frame.write.format("kafka")
            .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
            .option("kafka.max.request.size", "1024")
            .option("topic", topic)
            .save()
        )
    failure = assert_query_failed(raised.value, "RecordTooLargeException")
    assert any("RecordTooLargeException" in cause for cause in failure.causes)


def test_a_reason_both_named_and_worded_is_listed_once():
    """Spark 3.5's text for deleted partitions matches the reason twice (its name, and its
    message stem); with two partitions gone it used to read
    ['PARTITIONS_DELETED', 'PARTITIONS_DELETED']."""
    text = (
        "java.lang.IllegalStateException: Set(t-0, t-1) are gone. Some data may have been "
        f"missed. {DATA_LOSS}; either the data was aged out by Kafka or the topic may have "
        "been deleted before all the data in the topic was processed."
    )
    failure = assert_query_failed(RuntimeError(text), "PARTITIONS_DELETED")
    assert failure.data_loss == ["PARTITIONS_DELETED"]
