"""`retry`, the one loop that waits for a broker to agree (a login it accepts, a
partition's leader settling): what it returns, what it raises past its time, and the
cause that error carries (the record client's settling errors keep theirs)."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException

from kafkatest.brokers import client
from kafkatest.brokers.client_waits import retry
from kafkatest.errors import BrokerError


def test_retry_returns_once_the_attempt_succeeds() -> None:
    tries: list[int] = []

    def attempt() -> str:
        tries.append(1)
        if len(tries) < 3:
            raise OSError("not yet")
        return "done"

    assert retry(attempt, (OSError,), 60.0, 0.0, lambda exc: BrokerError(str(exc))) == "done"
    assert len(tries) == 3


def test_retry_gives_up_with_the_last_error_and_no_context() -> None:
    def attempt() -> None:
        raise OSError("refused")

    with pytest.raises(BrokerError, match="gave up: refused") as raised:
        retry(attempt, (OSError,), 0.0, 0.0, lambda exc: BrokerError(f"gave up: {exc}"))
    assert raised.value.__cause__ is None
    assert raised.value.__suppress_context__


def test_an_error_it_does_not_retry_passes_at_once() -> None:
    def attempt() -> None:
        raise ValueError("a bug, not a wait")

    with pytest.raises(ValueError, match="a bug"):
        retry(attempt, (OSError,), 60.0, 0.0, lambda exc: BrokerError(str(exc)))


def _record_client() -> client.RecordClient:
    return client.RecordClient.__new__(client.RecordClient)


def test_a_settling_error_past_its_time_is_a_broker_error_caused_by_kafka_s() -> None:
    def attempt() -> None:
        raise KafkaException(KafkaError(KafkaError.LEADER_NOT_AVAILABLE))

    with pytest.raises(BrokerError, match=r"list offsets failed: .*LEADER_NOT_AVAILABLE") as raised:
        _record_client()._settled(attempt, "list offsets", timeout_s=0.0)
    assert isinstance(raised.value.__cause__, KafkaException)


def test_an_error_that_is_not_settling_fails_at_once_caused_by_kafka_s() -> None:
    tries: list[int] = []

    def attempt() -> None:
        tries.append(1)
        raise KafkaException(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED))

    with pytest.raises(BrokerError, match="TOPIC_AUTHORIZATION_FAILED") as raised:
        _record_client()._settled(attempt, "list offsets", timeout_s=60.0)
    assert isinstance(raised.value.__cause__, KafkaException)
    assert len(tries) == 1
