"""Transactions request by request, on every backend: Kafka 4.1's answers, written down.

librdkafka and the Java client each take one path; these raw requests pin the rest:
the KIP-890 part 1 check a leader makes for TV1 clients (Produce to a partition not
in the transaction), AddPartitionsToTxn's verify-only form (v4+), error codes as old
and new versions see them (PRODUCER_FENCED vs INVALID_PRODUCER_EPOCH), EndTxn retries,
and the aborted-transactions list in Fetch (null for read_uncommitted).
"""

from __future__ import annotations

import datetime
import time
import uuid
from typing import Any

import pytest
from batch_builder import build_batch
from kio.schema.errors import ErrorCode
from kio.static.primitive import i8, i16, i32, i64
from raw_client import ask, fetch_v12_request

from kafkatest import Broker
from kafkatest.brokers.capabilities import Capability
from kafkatest.emulator.state.groups.consumer.regex import compile_linear

PRODUCE, FETCH, FIND_COORDINATOR, INIT_PRODUCER_ID, ADD_PARTITIONS, END_TXN = 0, 1, 10, 22, 24, 26
DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS, TXN_OFFSET_COMMIT = 65, 66, 28
TRANSACTIONAL = 0x10


def find_transaction_coordinator(broker: Broker, transactional_id: str) -> None:
    """Kafka creates __transaction_state on the first lookup (answering
    COORDINATOR_NOT_AVAILABLE meanwhile); until then InitProducerId gets NOT_COORDINATOR."""
    from kio.schema.find_coordinator.v3.request import FindCoordinatorRequest

    request = FindCoordinatorRequest(key=transactional_id, key_type=i8(1))
    for _ in range(100):
        response = ask(broker.bootstrap_servers, FIND_COORDINATOR, 3, request)
        if response.error_code == ErrorCode.none:
            return
        time.sleep(0.1)
    raise AssertionError(f"no transaction coordinator: {response.error_code}")


def init_producer(broker: Broker, transactional_id: str, timeout_ms: int = 60000) -> Any:
    from kio.schema.init_producer_id.v5.request import InitProducerIdRequest

    if transactional_id:
        find_transaction_coordinator(broker, transactional_id)
    request = InitProducerIdRequest(
        transactional_id=transactional_id,
        transaction_timeout=datetime.timedelta(milliseconds=timeout_ms),
        producer_id=i64(-1),
        producer_epoch=i16(-1),
    )
    # Kafka answers COORDINATOR_NOT_AVAILABLE while it creates __transaction_state.
    for _ in range(100):
        response = ask(broker.bootstrap_servers, INIT_PRODUCER_ID, 5, request)
        if response.error_code not in (
            ErrorCode.coordinator_not_available,
            ErrorCode.not_coordinator,
            ErrorCode.coordinator_load_in_progress,
        ):
            return response
        time.sleep(0.1)
    return response


def produce(
    broker: Broker, version: int, transactional_id: str, topic: str, pid: int, epoch: int, seq: int
) -> Any:
    module = f"kio.schema.produce.v{version}.request"
    types = __import__(module, fromlist=["ProduceRequest"])
    batch = build_batch(
        [b"x"],
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        attributes=TRANSACTIONAL,
    )
    request = types.ProduceRequest(
        transactional_id=transactional_id,
        acks=i16(-1),
        timeout=datetime.timedelta(seconds=10),
        topic_data=(
            types.TopicProduceData(
                name=topic,
                partition_data=(types.PartitionProduceData(index=i32(0), records=batch),),
            ),
        ),
    )
    # A just-created topic's leader may still be starting on Kafka: retry until it serves.
    for _ in range(100):
        response = ask(broker.bootstrap_servers, PRODUCE, version, request)
        partition = response.responses[0].partition_responses[0]
        if partition.error_code != ErrorCode.not_leader_or_follower:
            return partition
        time.sleep(0.1)
    return partition


def add_partitions_v3(
    broker: Broker, transactional_id: str, pid: int, epoch: int, topics: dict[str, list[int]]
) -> dict[tuple[str, int], ErrorCode]:
    from kio.schema.add_partitions_to_txn.v3.request import (
        AddPartitionsToTxnRequest,
        AddPartitionsToTxnTopic,
    )

    request = AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=transactional_id,
        v3_and_below_producer_id=i64(pid),
        v3_and_below_producer_epoch=i16(epoch),
        v3_and_below_topics=tuple(
            AddPartitionsToTxnTopic(name=name, partitions=tuple(i32(p) for p in parts))
            for name, parts in topics.items()
        ),
    )
    response = ask(broker.bootstrap_servers, ADD_PARTITIONS, 3, request)
    return {
        (t.name, p.partition_index): p.partition_error_code
        for t in response.results_by_topic_v3_and_below
        for p in t.results_by_partition
    }


def verify_v5(
    broker: Broker, transactional_id: str, pid: int, epoch: int, topic: str
) -> tuple[ErrorCode, ErrorCode]:
    """(top-level error, the partition's error) of a verify-only AddPartitionsToTxn."""
    from kio.schema.add_partitions_to_txn.v5.request import (
        AddPartitionsToTxnRequest,
        AddPartitionsToTxnTopic,
        AddPartitionsToTxnTransaction,
    )

    request = AddPartitionsToTxnRequest(
        transactions=(
            AddPartitionsToTxnTransaction(
                transactional_id=transactional_id,
                producer_id=i64(pid),
                producer_epoch=i16(epoch),
                verify_only=True,
                topics=(AddPartitionsToTxnTopic(name=topic, partitions=(i32(0),)),),
            ),
        )
    )
    response = ask(broker.bootstrap_servers, ADD_PARTITIONS, 5, request)
    [result] = response.results_by_transaction
    [topic_result] = result.topic_results
    [partition] = topic_result.results_by_partition
    return response.error_code, partition.partition_error_code


def end_txn(
    broker: Broker, version: int, transactional_id: str, pid: int, epoch: int, commit: bool
) -> ErrorCode:
    types = __import__(f"kio.schema.end_txn.v{version}.request", fromlist=["EndTxnRequest"])
    request = types.EndTxnRequest(
        transactional_id=transactional_id,
        producer_id=i64(pid),
        producer_epoch=i16(epoch),
        committed=commit,
    )
    # Kafka writes the markers after answering; until they are written a second
    # EndTxn gets CONCURRENT_TRANSACTIONS, which clients retry (the emulator is done).
    for _ in range(100):
        error = ask(broker.bootstrap_servers, END_TXN, version, request).error_code
        if error != ErrorCode.concurrent_transactions:
            return error
        time.sleep(0.05)
    return error


def fetch_v12(broker: Broker, topic: str, isolation: int) -> Any:
    request = fetch_v12_request(topic, isolation=isolation)
    return ask(broker.bootstrap_servers, FETCH, 12, request).responses[0].partitions[0]


def test_transaction_requests_answer_as_kafka_does(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic()
    transactional_id = f"wire-{uuid.uuid4().hex[:8]}"
    init = init_producer(kafka_broker, transactional_id)
    assert (init.error_code, init.producer_epoch) == (ErrorCode.none, 0)
    pid = init.producer_id

    # KIP-890 part 1: a TV1 client producing to a partition it never added.
    assert produce(kafka_broker, 11, transactional_id, topic, pid, 0, 0).error_code == (
        ErrorCode.transaction_abortable
    )
    assert produce(kafka_broker, 10, transactional_id, topic, pid, 0, 0).error_code == (
        ErrorCode.invalid_txn_state
    )
    assert verify_v5(kafka_broker, transactional_id, pid, 0, topic) == (
        ErrorCode.none,
        ErrorCode.transaction_abortable,
    )

    missing = f"missing-{uuid.uuid4().hex[:8]}"
    assert add_partitions_v3(
        kafka_broker, transactional_id, pid, 0, {topic: [0], missing: [0]}
    ) == {
        (topic, 0): ErrorCode.operation_not_attempted,
        (missing, 0): ErrorCode.unknown_topic_or_partition,
    }
    assert add_partitions_v3(kafka_broker, transactional_id, pid, 1, {topic: [0]}) == {
        (topic, 0): ErrorCode.producer_fenced
    }
    assert add_partitions_v3(kafka_broker, transactional_id, pid + 1, 0, {topic: [0]}) == {
        (topic, 0): ErrorCode.invalid_producer_id_mapping
    }
    assert add_partitions_v3(kafka_broker, transactional_id, pid, 0, {topic: [0]}) == {
        (topic, 0): ErrorCode.none
    }
    assert verify_v5(kafka_broker, transactional_id, pid, 0, topic) == (
        ErrorCode.none,
        ErrorCode.none,
    )
    written = produce(kafka_broker, 11, transactional_id, topic, pid, 0, 0)
    assert (written.error_code, written.base_offset) == (ErrorCode.none, 0)

    # A stale epoch: PRODUCER_FENCED from v2 on, INVALID_PRODUCER_EPOCH before.
    assert end_txn(kafka_broker, 3, transactional_id, pid, 1, False) == ErrorCode.producer_fenced
    assert end_txn(kafka_broker, 1, transactional_id, pid, 1, False) == (
        ErrorCode.invalid_producer_epoch
    )
    assert end_txn(kafka_broker, 3, transactional_id, pid, 0, False) == ErrorCode.none
    # TV1 retries: the same result again is fine, the other one is not.
    assert end_txn(kafka_broker, 3, transactional_id, pid, 0, False) == ErrorCode.none
    assert end_txn(kafka_broker, 3, transactional_id, pid, 0, True) == ErrorCode.invalid_txn_state

    committed = fetch_v12(kafka_broker, topic, isolation=1)
    assert (committed.high_watermark, committed.last_stable_offset) == (2, 2)
    assert [(a.producer_id, a.first_offset) for a in committed.aborted_transactions] == [(pid, 0)]
    uncommitted = fetch_v12(kafka_broker, topic, isolation=0)
    assert uncommitted.aborted_transactions is None
    assert uncommitted.last_stable_offset == 2


def test_init_producer_id_refuses_bad_requests(kafka_broker: Broker) -> None:
    assert init_producer(kafka_broker, "").error_code == ErrorCode.invalid_request
    too_long = init_producer(kafka_broker, f"wire-{uuid.uuid4().hex[:8]}", timeout_ms=900_001)
    assert too_long.error_code == ErrorCode.invalid_transaction_timeout


def test_admin_views_of_unknown_transactions(kafka_broker: Broker) -> None:
    from kio.schema.describe_transactions.v0.request import DescribeTransactionsRequest
    from kio.schema.list_transactions.v1.request import ListTransactionsRequest

    unknown = f"wire-unknown-{uuid.uuid4().hex[:8]}"
    find_transaction_coordinator(kafka_broker, unknown)
    described = ask(
        kafka_broker.bootstrap_servers,
        DESCRIBE_TRANSACTIONS,
        0,
        DescribeTransactionsRequest(transactional_ids=(unknown,)),
    )
    [state] = described.transaction_states
    assert (state.error_code, state.transactional_id) == (
        ErrorCode.transactional_id_not_found,
        unknown,
    )
    # The rest keeps the message's defaults.
    assert (state.transaction_state, state.producer_id, state.producer_epoch, state.topics) == (
        "",
        0,
        0,
        (),
    )
    assert state.transaction_start_time.timestamp() == 0
    listed = ask(
        kafka_broker.bootstrap_servers,
        LIST_TRANSACTIONS,
        1,
        ListTransactionsRequest(
            state_filters=("Bogus",), producer_id_filters=(), duration_filter=i64(-1)
        ),
    )
    assert (listed.error_code, listed.unknown_state_filters) == (ErrorCode.none, ("Bogus",))
    assert listed.transaction_states == ()


def describe(broker: Broker, transactional_id: str) -> Any:
    from kio.schema.describe_transactions.v0.request import DescribeTransactionsRequest

    request = DescribeTransactionsRequest(transactional_ids=(transactional_id,))
    [state] = ask(broker.bootstrap_servers, DESCRIBE_TRANSACTIONS, 0, request).transaction_states
    return state


def test_tv2_produce_adds_the_partition_and_a_timeout_fences_the_epoch(
    kafka_broker: Broker, kafka_topic
) -> None:
    """Produce v12 (TV2) needs no AddPartitionsToTxn: the leader adds the partition.
    Past transaction.timeout.ms the coordinator bumps the epoch and aborts; the old
    epoch can no longer write."""
    topic = kafka_topic()
    transactional_id = f"wire-tv2-{uuid.uuid4().hex[:8]}"
    # Long on the emulator (its clock is moved), short enough to wait out on Kafka.
    timeout_ms = 60_000 if kafka_broker.can(Capability.CLOCK) else 5_000
    init = init_producer(kafka_broker, transactional_id, timeout_ms=timeout_ms)
    pid = init.producer_id
    written = produce(kafka_broker, 12, transactional_id, topic, pid, 0, 0)
    assert (written.error_code, written.base_offset) == (ErrorCode.none, 0)
    state = describe(kafka_broker, transactional_id)
    assert (state.transaction_state, state.producer_epoch) == ("Ongoing", 0)
    assert [(t.topic, t.partitions) for t in state.topics] == [(topic, (0,))]

    kafka_broker.let_time_pass((timeout_ms + 600) / 1000)  # the clock, or a real wait
    for _ in range(100):
        state = describe(kafka_broker, transactional_id)
        if state.transaction_state == "CompleteAbort":
            break
        time.sleep(0.1)
    assert (state.transaction_state, state.producer_epoch) == ("CompleteAbort", 1)
    # TV2 reads the previous epoch as a retry of the request that ended the transaction:
    # the abort is answered as done, a commit is the wrong outcome.
    assert end_txn(kafka_broker, 5, transactional_id, pid, 0, True) == ErrorCode.invalid_txn_state
    assert end_txn(kafka_broker, 5, transactional_id, pid, 0, False) == ErrorCode.none
    assert produce(kafka_broker, 12, transactional_id, topic, pid, 0, 1).error_code == (
        ErrorCode.invalid_producer_epoch
    )


def txn_offset_commit(
    broker: Broker,
    version: int,
    transactional_id: str,
    pid: int,
    epoch: int,
    group: str,
    topic: str,
) -> ErrorCode:
    types = __import__(
        f"kio.schema.txn_offset_commit.v{version}.request", fromlist=["TxnOffsetCommitRequest"]
    )
    request = types.TxnOffsetCommitRequest(
        transactional_id=transactional_id,
        group_id=group,
        producer_id=i64(pid),
        producer_epoch=i16(epoch),
        generation_id=i32(-1),
        member_id="",
        group_instance_id=None,
        topics=(
            types.TxnOffsetCommitRequestTopic(
                name=topic,
                partitions=(
                    types.TxnOffsetCommitRequestPartition(
                        partition_index=i32(0),
                        committed_offset=i64(3),
                        committed_leader_epoch=i32(-1),
                        committed_metadata="",
                    ),
                ),
            ),
        ),
    )
    response = ask(broker.bootstrap_servers, TXN_OFFSET_COMMIT, version, request)
    return response.topics[0].partitions[0].error_code


def test_txn_offset_commit_needs_the_offsets_partition_in_the_transaction(
    kafka_broker: Broker, kafka_topic
) -> None:
    """TV1 (v3, after AddOffsetsToTxn) and TV2 (v5, which adds it itself); a stale epoch
    is INVALID_PRODUCER_EPOCH here, where the coordinator APIs say PRODUCER_FENCED."""
    from kio.schema.find_coordinator.v3.request import FindCoordinatorRequest

    topic = kafka_topic()
    group = f"wire-group-{uuid.uuid4().hex[:8]}"
    for _ in range(100):  # Kafka creates __consumer_offsets on the first group lookup
        found = ask(
            kafka_broker.bootstrap_servers,
            FIND_COORDINATOR,
            3,
            FindCoordinatorRequest(key=group, key_type=i8(0)),
        )
        if found.error_code == ErrorCode.none:
            break
        time.sleep(0.1)
    transactional_id = f"wire-offsets-{uuid.uuid4().hex[:8]}"
    pid = init_producer(kafka_broker, transactional_id).producer_id
    assert txn_offset_commit(kafka_broker, 3, transactional_id, pid, 0, group, topic) == (
        ErrorCode.invalid_txn_state
    )
    assert txn_offset_commit(kafka_broker, 5, transactional_id, pid, 1, group, topic) == (
        ErrorCode.invalid_producer_epoch
    )
    assert txn_offset_commit(kafka_broker, 5, transactional_id, pid, 0, group, topic) == (
        ErrorCode.none
    )


def list_by_pattern(broker: Broker, pattern: str) -> Any:
    from kio.schema.list_transactions.v2.request import ListTransactionsRequest

    request = ListTransactionsRequest(
        state_filters=(),
        producer_id_filters=(),
        duration_filter=i64(-1),
        transactional_id_pattern=pattern,
    )
    return ask(broker.bootstrap_servers, LIST_TRANSACTIONS, 2, request)


def test_list_transactions_filters_by_a_pattern_and_refuses_a_bad_one(kafka_broker: Broker) -> None:
    """KIP-1152: the pattern must match the whole id; one that does not compile is
    INVALID_REGULAR_EXPRESSION for the whole request."""
    prefix = f"wire-pattern-{uuid.uuid4().hex[:8]}"
    for suffix in ("a", "b"):
        assert init_producer(kafka_broker, f"{prefix}-{suffix}").error_code == ErrorCode.none
    listed = list_by_pattern(kafka_broker, f"{prefix}-.*")
    assert listed.error_code == ErrorCode.none
    assert sorted(t.transactional_id for t in listed.transaction_states) == [
        f"{prefix}-a",
        f"{prefix}-b",
    ]
    only_b = list_by_pattern(kafka_broker, f"{prefix}-b")
    assert [t.transactional_id for t in only_b.transaction_states] == [f"{prefix}-b"]
    assert list_by_pattern(kafka_broker, prefix).transaction_states == ()  # whole id only
    bad = list_by_pattern(kafka_broker, "tx-(unclosed")
    assert (bad.error_code, bad.transaction_states) == (ErrorCode.invalid_regular_expression, ())


@pytest.mark.kafka_backends("emulator")  # Java's backtracking regex would hang Kafka's thread
def test_a_catastrophic_pattern_costs_the_emulator_linear_time(kafka_broker: Broker) -> None:
    """A pattern that backtracks exponentially on a backtracking engine (2^64 steps on
    this id) is matched by RE2 in time linear in the id: the in-process emulator
    answers (a backtracking match would never return, and the request would time out);
    no elapsed time is asserted, which a loaded machine would skew."""
    victim = "a" * 64 + "!"
    assert init_producer(kafka_broker, victim).error_code == ErrorCode.none
    assert compile_linear("(a+)+$").fullmatch(victim) is None  # RE2: no backtracking
    listed = list_by_pattern(kafka_broker, "(a+)+$")
    assert listed.error_code == ErrorCode.none
    assert victim not in [t.transactional_id for t in listed.transaction_states]
