import orders_enrichment as job  # the job under test: fixtures/jobs/orders_enrichment.py

from kafkatest.assertions import assert_at_least_once
from kafkatest.seeding import seed
from kafkatest.sinks import topic_rows
from kafkatest.spark import wait_for_query


def test_every_order_is_enriched(spark, kafka_broker, kafka_topic, checkpoint_dir):
    source, sink = kafka_topic(partitions=3), kafka_topic()
    seeded = seed(
        kafka_broker,
        source,
        [
            {
                "key": f"o-{i}",
                "value": {
                    "order_id": f"o-{i}",
                    "customer": "ada",
                    "amount": 10.0,
                    "currency": "USD",
                },
                "headers": {"source": "web"},
                "partition": i % 3,
            }
            for i in range(30)
        ],
    )

    query = job.start_stream(
        spark, kafka_broker.bootstrap_servers, source, sink, str(checkpoint_dir)
    )
    wait_for_query(query)  # AvailableNow: returns when caught up; raises the query's error

    rows = topic_rows(kafka_broker, sink)
    assert_at_least_once(seeded, rows)  # duplicates pass; a lost or stray record fails
    assert {row["value"]["amount_eur"] for row in rows} == {9.0}
