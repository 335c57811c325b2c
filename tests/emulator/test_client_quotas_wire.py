"""Client quotas (DescribeClientQuotas, AlterClientQuotas) on the wire, on every backend.

What `kafka-configs --entity-type users|clients|ips` and Admin's client-quota calls
send; the checks, matches and error words are Kafka 4.1's (its controller checks an
alteration, its metadata image answers a describe). Names are unique per test: the
`kafka` backend's quotas outlive a test.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from kio.schema.alter_client_quotas.v1 import request as alter
from kio.schema.describe_client_quotas.v1 import request as describe
from kio.schema.errors import ErrorCode
from kio.static.primitive import f64, i8
from raw_client import ask

from kafkatest import Broker

DESCRIBE, ALTER = 48, 49
EXACT, DEFAULT, SPECIFIED = 0, 1, 2

Entity = tuple[tuple[str, str | None], ...]


def _alter(
    broker: Broker,
    changes: list[tuple[Entity, dict[str, float | None]]],
    validate_only: bool = False,
) -> dict[Entity, tuple[ErrorCode, str | None]]:
    request = alter.AlterClientQuotasRequest(
        entries=tuple(
            alter.EntryData(
                entity=tuple(alter.EntityData(entity_type=t, entity_name=n) for t, n in entity),
                ops=tuple(
                    alter.OpData(key=k, value=f64(v or 0.0), remove=v is None)
                    for k, v in ops.items()
                ),
            )
            for entity, ops in changes
        ),
        validate_only=validate_only,
    )
    response = ask(broker.bootstrap_servers, ALTER, 1, request)
    return {
        tuple(sorted((e.entity_type, e.entity_name) for e in entry.entity)): (
            entry.error_code,
            entry.error_message,
        )
        for entry in response.entries
    }


def _describe(
    broker: Broker, components: list[tuple[str, int, str | None]], strict: bool = False
) -> Any:
    request = describe.DescribeClientQuotasRequest(
        components=tuple(
            describe.ComponentData(entity_type=t, match_type=i8(m), match=n)
            for t, m, n in components
        ),
        strict=strict,
    )
    return ask(broker.bootstrap_servers, DESCRIBE, 1, request)


def _found(response: Any, names: set[str | None]) -> dict[Entity, dict[str, float]]:
    """The described entities that name only `names` (other tests' quotas left out)."""
    assert response.error_code == ErrorCode.none, response.error_message
    found = {}
    for entry in response.entries:
        entity = tuple(sorted((e.entity_type, e.entity_name) for e in entry.entity))
        if all(name in names for _, name in entity):
            found[entity] = {v.key: float(v.value) for v in entry.values}
    return found


def _settles(
    broker: Broker,
    components: list[tuple[str, int, str | None]],
    names: set[str | None],
    expected: dict[Entity, dict[str, float]],
    strict: bool = False,
) -> None:
    """Kafka's broker answers a describe from its metadata image, which a committed
    alteration reaches a moment later: wait for what is expected."""
    deadline = time.monotonic() + 15
    while True:
        found = _found(_describe(broker, components, strict), names)
        if found == expected or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert found == expected


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


OK = (ErrorCode.none, None)


def test_quotas_are_set_matched_and_removed_as_on_kafka(kafka_broker: Broker) -> None:
    user, client = _name("user"), _name("client")
    names = {user, client}
    alone: Entity = (("user", user),)
    pair: Entity = (("client-id", client), ("user", user))
    assert _alter(
        kafka_broker,
        [
            (alone, {"producer_byte_rate": 1024.0, "request_percentage": 12.5}),
            (pair, {"consumer_byte_rate": 2048.0}),
        ],
    ) == {alone: OK, pair: OK}
    by_user = [("user", EXACT, user)]
    alone_quotas = {"producer_byte_rate": 1024.0, "request_percentage": 12.5}
    # Exact on the user: both entities naming it; strict: only the one of that shape.
    _settles(
        kafka_broker, by_user, names, {alone: alone_quotas, pair: {"consumer_byte_rate": 2048.0}}
    )
    _settles(kafka_broker, by_user, names, {alone: alone_quotas}, strict=True)
    # Any client id: only the pair; a client id of another name: nothing.
    any_client = [("client-id", SPECIFIED, None)]
    _settles(kafka_broker, any_client, names, {pair: {"consumer_byte_rate": 2048.0}})
    _settles(kafka_broker, [("client-id", EXACT, _name("other"))], names, {})
    # validate_only changes nothing; removing a key keeps the others; the last one
    # removed takes the entity away.
    only_checked = _alter(kafka_broker, [(alone, {"producer_byte_rate": 1.0})], validate_only=True)
    assert only_checked == {alone: OK}
    assert _alter(kafka_broker, [(alone, {"producer_byte_rate": None})]) == {alone: OK}
    _settles(kafka_broker, by_user, names, {alone: {"request_percentage": 12.5}}, strict=True)
    assert _alter(kafka_broker, [(alone, {"request_percentage": None})]) == {alone: OK}
    _settles(kafka_broker, by_user, names, {}, strict=True)


def test_default_entities_are_matched_by_the_default_component(kafka_broker: Broker) -> None:
    client = _name("client")
    default_user_client: Entity = (("client-id", client), ("user", None))
    assert _alter(kafka_broker, [(default_user_client, {"producer_byte_rate": 100.0})]) == {
        default_user_client: OK
    }
    components = [("user", DEFAULT, None), ("client-id", EXACT, client)]
    expected = {default_user_client: {"producer_byte_rate": 100.0}}
    _settles(kafka_broker, components, {None, client}, expected, strict=True)
    assert _alter(kafka_broker, [(default_user_client, {"producer_byte_rate": None})]) == {
        default_user_client: OK
    }
    _settles(kafka_broker, components, {None, client}, {}, strict=True)


def test_ip_quotas_take_only_the_connection_rate(kafka_broker: Broker) -> None:
    address = "192.0.2.17"
    ip: Entity = (("ip", address),)
    assert _alter(kafka_broker, [(ip, {"connection_creation_rate": 10.0})]) == {ip: OK}
    by_ip = [("ip", EXACT, address)]
    _settles(kafka_broker, by_ip, {address}, {ip: {"connection_creation_rate": 10.0}})
    assert _alter(kafka_broker, [(ip, {"producer_byte_rate": 10.0})]) == {
        ip: (ErrorCode.invalid_request, "Invalid configuration key producer_byte_rate")
    }
    assert _alter(kafka_broker, [(ip, {"connection_creation_rate": None})]) == {ip: OK}
    _settles(kafka_broker, by_ip, {address}, {})


@pytest.mark.parametrize(
    ("entity", "ops", "message"),
    [
        (
            (("user", "u"), ("ip", "1.2.3.4")),
            {"producer_byte_rate": 1.0},
            "Invalid quota entity combination, IP entity shouldnot be combined with User or "
            "ClientId",
        ),
        (
            (("ip", "not an address"),),
            {"connection_creation_rate": 1.0},
            "not an address is not a valid IP or resolvable host.",
        ),
        (
            (("user", "u"),),
            {"producer_byte_rate": 10000.5},
            "producer_byte_rate cannot be a fractional value.",
        ),
        (
            (("user", "u"),),
            {"request_percentage": 0.0},
            "Quota request_percentage must be greater than 0",
        ),
        ((("user", "u"),), {"bad": 1.0}, "Invalid configuration key bad"),
        ((("user", ""),), {"producer_byte_rate": 1.0}, "Empty user not supported"),
        (
            (("other", "u"),),
            {"producer_byte_rate": 1.0},
            "Unhandled client quota entity type: other",
        ),
        ((), {"producer_byte_rate": 1.0}, "Invalid empty client quota entity"),
    ],
    ids=["ip-and-user", "bad-ip", "fraction", "zero", "unknown-key", "empty", "type", "none"],
)
def test_bad_alterations_are_refused_with_kafkas_words(
    kafka_broker: Broker, entity: Entity, ops: dict[str, float | None], message: str
) -> None:
    ((code, text),) = _alter(kafka_broker, [(entity, ops)], validate_only=True).values()
    assert (code, text) == (ErrorCode.invalid_request, message)


@pytest.mark.parametrize(
    ("components", "code", "message"),
    [
        ([("other", EXACT, "x")], ErrorCode.unsupported_version, "Unsupported entity type other"),
        (
            [("ip", SPECIFIED, None), ("user", EXACT, "u")],
            ErrorCode.invalid_request,
            "Invalid entity filter component combination. IP filter component should not be "
            "used with user or clientId filter component.",
        ),
        (
            [("user", EXACT, None)],
            ErrorCode.invalid_request,
            "Request specified MATCH_TYPE_EXACT, but set match string to null.",
        ),
        (
            [("user", DEFAULT, "u")],
            ErrorCode.invalid_request,
            "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.",
        ),
        (
            [("user", SPECIFIED, None), ("user", EXACT, "u")],
            ErrorCode.invalid_request,
            "Entity type user cannot appear more than once in the filter.",
        ),
    ],
    ids=["type", "ip-and-user", "exact-null", "default-named", "twice"],
)
def test_bad_filters_fail_the_describe_with_kafkas_words(
    kafka_broker: Broker,
    components: list[tuple[str, int, str | None]],
    code: ErrorCode,
    message: str,
) -> None:
    response = _describe(kafka_broker, components)
    assert (response.error_code, response.error_message) == (code, message)
