"""The harness's own calls (seeding, sink readers, admin helpers, faults) work against
a secured broker on every backend: they log in as the broker's admin user."""

from __future__ import annotations

import time
from collections.abc import Callable

from kafkatest import Broker, seed, topic_rows
from kafkatest.faults import faults_for


def test_seed_and_topic_rows_on_a_secured_broker(secured: Callable[[str], Broker]) -> None:
    broker = secured("sasl_ssl")
    topic = f"harness-seeded-{broker.backend}"
    broker.create_topic(topic, partitions=2)
    now = int(time.time() * 1000)

    seed(broker, topic, [{"id": i, "ts": now} for i in range(4)], key_field="id")

    rows = topic_rows(broker, topic)
    assert sorted(row["value"]["id"] for row in rows) == [0, 1, 2, 3]


def test_faults_on_a_secured_broker(secured: Callable[[str], Broker]) -> None:
    broker = secured("sasl_ssl")
    faults = faults_for(broker)
    topic = f"harness-faults-{broker.backend}"
    broker.create_topic(topic, partitions=1)
    seed(broker, topic, [{"n": i} for i in range(3)])

    assert faults.delete_records(topic, 1) == {0: 1}
    faults.add_partitions(topic, 2)
    assert broker.partition_count(topic) == 2
    transactional_id = faults.hung_transaction(topic, records=2)
    assert transactional_id.startswith("kafkatest-hung-")
    assert broker.latest_offsets(topic)[0] == 5
    faults.clear()
