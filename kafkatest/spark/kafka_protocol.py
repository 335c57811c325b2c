"""The Kafka requests Spark's Kafka connector sends, by API and version.

A broker that decodes requests in Python (the emulator) loads each API version's
schema when the first such request arrives, and the client waits meanwhile: in a
streaming test on a warm Spark, Spark's Java client sends eight API versions that
nothing else in the run has sent, each of its first requests answered 5-15 ms late,
all on the job's path. The plugin names them to the broker once a test with Spark
and a broker is set up (`Broker.expect_requests`), and the broker loads them while
it idles.
"""

from __future__ import annotations

#: What Spark 4's connector sends (kafka-clients 3.9: Spark 4.2.1 ships 3.9.2) in a
#: streaming read and write: each API's newest version in kafka-clients 3.9, the
#: emulator serving as new or newer, as its request log shows. A later kafka-clients
#: sending newer versions only loses the head start: those load at first use.
KAFKA_CLIENTS_3_9 = (
    (18, 4),  # ApiVersions: every connection
    (3, 12),  # Metadata
    (60, 1),  # DescribeCluster: the offset reader's admin client
    (75, 0),  # DescribeTopicPartitions: the offset reader's admin client
    (2, 9),  # ListOffsets: the offset reader, and the executors' consumers
    (1, 17),  # Fetch
    (22, 5),  # InitProducerId: the sink's idempotent producer
    (0, 11),  # Produce
)


def connector_requests(pyspark_version: str) -> tuple[tuple[int, int], ...]:
    """The (API key, version) pairs the connector of this PySpark line sends; none
    for lines whose client was not observed (PySpark 3.5 ships kafka-clients 3.4)."""
    return KAFKA_CLIENTS_3_9 if int(pyspark_version.split(".")[0]) >= 4 else ()
