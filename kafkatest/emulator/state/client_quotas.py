"""Client quotas (KIP-546): what `kafka-configs --entity-type users|clients|ips`
and Admin.alterClientQuotas / describeClientQuotas keep.

Checked as Kafka 4.1's controller checks an alteration (ClientQuotaControlManager:
entity types and their combinations, each key's type, positive values, whole
numbers for integral keys) and matched as its metadata image answers a describe
(ClientQuotasImage: exact, default and "any name" components, strict or not), with
Kafka's error words. The emulator keeps quotas but never throttles a client: a
test can set and read them, not observe their effect.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass

from kafkatest.emulator.state.errors import InvalidRequest, StateError

USER, CLIENT_ID, IP = "user", "client-id", "ip"

#: QuotaConfig's keys for user and client-id entities, by ConfigDef type.
USER_AND_CLIENT_KEYS = {
    "producer_byte_rate": "LONG",
    "consumer_byte_rate": "LONG",
    "request_percentage": "DOUBLE",
    "controller_mutation_rate": "DOUBLE",
}
#: QuotaConfig.ipConfigs().
IP_KEYS = {"connection_creation_rate": "INT"}
_INTEGRAL_LIMITS = {
    "INT": (float(2**31 - 1), "an INT"),
    "LONG": (float(2**63 - 1), "a LONG"),
}

#: An entity: (entity type, name) pairs, a None name being the default entity.
Entity = frozenset[tuple[str, "str | None"]]
#: Describe's match types (DescribeClientQuotasRequest.MATCH_TYPE_*).
MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2


class UnsupportedEntityType(StateError):
    error_name = "unsupported_version"


@dataclass(frozen=True, slots=True)
class Alteration:
    """One entry of an AlterClientQuotas request: set a key, or remove it (None)."""

    entity: Sequence[tuple[str, str | None]]
    ops: Sequence[tuple[str, float | None]]


@dataclass(frozen=True, slots=True)
class FilterComponent:
    entity_type: str
    match_type: int
    match: str | None


def entity_text(entity: Entity) -> str:
    """As Java prints a ClientQuotaEntity (its HashMap order aside)."""
    order = {USER: 0, CLIENT_ID: 1, IP: 2}
    pairs = sorted(entity, key=lambda pair: (order.get(pair[0], 3), pair[0]))
    return "ClientQuotaEntity(entries={" + ", ".join(f"{t}={n}" for t, n in pairs) + "})"


class ClientQuotaStore:
    def __init__(self) -> None:
        self._quotas: dict[Entity, dict[str, float]] = {}

    def alter_steps(
        self,
        alterations: Iterable[Alteration],
        validate_only: bool,
        resolvable: Callable[[str], bool],
    ) -> Generator[None, None, list[tuple[Entity, StateError | None]]]:
        """Each entity's outcome; the valid ones are applied unless `validate_only`.
        One entry per step: the broker's loop runs other clients' requests between
        steps (a request may carry tens of thousands of entries).

        `resolvable(name)` says whether an ip entity's name is an address or a host
        name that resolves (Kafka's InetAddress.getByName).
        """
        results: dict[Entity, StateError | None] = {}
        changes: list[tuple[Entity, dict[str, float | None]]] = []
        for alteration in alterations:
            yield
            # Kafka reads a request entry's entity into a map: a repeated type keeps
            # its last name.
            entity: Entity = frozenset(dict(alteration.entity).items())
            ops: dict[str, float | None] = {}
            for key, value in alteration.ops:
                if key in ops:
                    results[entity] = InvalidRequest(
                        f"Duplicate quota key {key} not updating quota for this entity "
                        f"{entity_text(entity)}"
                    )
                else:
                    ops[key] = value
            if entity in results:
                results[entity] = InvalidRequest(f"Ignoring duplicate entity {entity_text(entity)}")
                continue
            error = _check(entity, ops, resolvable)
            results[entity] = error
            if error is None:
                changes.append((entity, ops))
        if not validate_only:
            for entity, ops in changes:
                self._apply(entity, ops)
        return list(results.items())

    def _apply(self, entity: Entity, ops: dict[str, float | None]) -> None:
        quotas = self._quotas.setdefault(entity, {})
        for key, value in ops.items():
            if value is None:
                quotas.pop(key, None)
            else:
                quotas[key] = value
        if not quotas:
            del self._quotas[entity]

    def describe(
        self, components: Sequence[FilterComponent], strict: bool
    ) -> list[tuple[Entity, dict[str, float]]]:
        """The entities the filter matches, with their quotas (ClientQuotasImage.describe)."""
        exact: dict[str, str | None] = {}
        any_name: set[str] = set()
        for component in components:
            kind = component.entity_type
            if not kind:
                raise InvalidRequest("Invalid empty entity type.")
            if kind in exact or kind in any_name:
                raise InvalidRequest(
                    f"Entity type {kind} cannot appear more than once in the filter."
                )
            if kind not in (IP, USER, CLIENT_ID):
                raise UnsupportedEntityType(f"Unsupported entity type {kind}")
            if component.match_type == MATCH_EXACT:
                if component.match is None:
                    raise InvalidRequest(
                        "Request specified MATCH_TYPE_EXACT, but set match string to null."
                    )
                exact[kind] = component.match
            elif component.match_type == MATCH_DEFAULT:
                if component.match is not None:
                    raise InvalidRequest(
                        "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."
                    )
                exact[kind] = None
            elif component.match_type == MATCH_SPECIFIED:
                if component.match is not None:
                    raise InvalidRequest(
                        "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."
                    )
                any_name.add(kind)
            else:
                raise InvalidRequest(f"Unknown match type {component.match_type}")
        named = set(exact) | any_name
        if IP in named and named & {USER, CLIENT_ID}:
            raise InvalidRequest(
                "Invalid entity filter component combination. IP filter component should not "
                "be used with user or clientId filter component."
            )
        return [
            (entity, dict(quotas))
            for entity, quotas in self._quotas.items()
            if _matches(dict(entity), exact, any_name, strict)
        ]


def _matches(
    entity: dict[str, str | None], exact: dict[str, str | None], any_name: set[str], strict: bool
) -> bool:
    if strict and len(entity) != len(exact) + len(any_name):
        return False
    if any(kind not in entity or entity[kind] != name for kind, name in exact.items()):
        return False
    return all(kind in entity for kind in any_name)


def _check(
    entity: Entity, ops: dict[str, float | None], resolvable: Callable[[str], bool]
) -> StateError | None:
    """ClientQuotaControlManager's checks, in its order; None when the entity may change."""
    if not entity:
        return InvalidRequest("Invalid empty client quota entity")
    for kind, name in entity:
        if kind not in (USER, CLIENT_ID, IP):
            return InvalidRequest(f"Unhandled client quota entity type: {kind}")
        if name is not None and not name:
            return InvalidRequest(f"Empty {kind} not supported")
    names = dict(entity)
    if IP in names:
        if USER in names or CLIENT_ID in names:
            # Kafka's words, missing space included.
            return InvalidRequest(
                "Invalid quota entity combination, IP entity shouldnot be combined with User "
                "or ClientId"
            )
        ip = names[IP]
        if ip is not None and not resolvable(ip):
            return InvalidRequest(f"{ip} is not a valid IP or resolvable host.")
        keys = IP_KEYS
    else:
        keys = USER_AND_CLIENT_KEYS
    for key, value in ops.items():
        if value is None:
            continue
        error = _check_value(keys, key, value)
        if error is not None:
            return error
    return None


def _check_value(keys: dict[str, str], key: str, value: float) -> StateError | None:
    kind = keys.get(key)
    if kind is None:
        return InvalidRequest(f"Invalid configuration key {key}")
    if value <= 0.0:  # NaN passes, as in Java
        return InvalidRequest(f"Quota {key} must be greater than 0")
    if kind == "DOUBLE":
        return None
    limit, article = _INTEGRAL_LIMITS[kind]
    if value > limit:
        return InvalidRequest(f"Proposed value for {key} is too large for {article}.")
    if abs(math.fmod(value, 1.0)) > 1e-6:
        return InvalidRequest(f"{key} cannot be a fractional value.")
    return None
