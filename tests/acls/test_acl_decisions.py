"""The authorization decision alone (no wire), as Kafka 4.1's StandardAuthorizer makes it.

Each rule here is the one `StandardAuthorizerData.findAclRule` / `findResult` and
`Authorizer.authorizeByResourceType` apply; the wire tests in test_acl_wire.py show
the same decisions through real Kafka and the emulator.
"""

from __future__ import annotations

import pytest

from kafkatest.emulator.state.acls import (
    AclBinding,
    AclFilter,
    AclOperation,
    AclPermission,
    Authorizer,
    InvalidAcl,
    PatternType,
    ResourceType,
)

Op, RT, PT = AclOperation, ResourceType, PatternType
ALICE, BOB = "User:alice", "User:bob"


def acl(
    operation: AclOperation,
    name: str = "orders",
    *,
    principal: str = ALICE,
    permission: AclPermission = AclPermission.ALLOW,
    pattern: PatternType = PT.LITERAL,
    resource_type: ResourceType = RT.TOPIC,
    host: str = "*",
) -> AclBinding:
    return AclBinding(resource_type, name, pattern, principal, host, operation, permission)


def authorizer(*bindings: AclBinding, **options: object) -> Authorizer:
    made = Authorizer(**options)  # type: ignore[arg-type]
    for binding in bindings:
        made.add(binding)
    return made


def allowed(a: Authorizer, operation: AclOperation, name: str = "orders", **kw: str) -> bool:
    return a.authorize(
        kw.get("principal", ALICE), kw.get("host", "10.0.0.1"), operation, RT.TOPIC, name
    )


def test_no_acl_means_denied_unless_allow_everyone_is_set() -> None:
    assert not allowed(authorizer(), Op.READ)
    assert allowed(authorizer(allow_everyone_if_no_acl_found=True), Op.READ)
    # allow.everyone only applies to a resource without any ACL at all.
    other = authorizer(acl(Op.READ, principal=BOB), allow_everyone_if_no_acl_found=True)
    assert not allowed(other, Op.READ)
    assert allowed(other, Op.READ, "payments")


def test_super_users_pass_even_a_deny() -> None:
    a = authorizer(acl(Op.ALL, permission=AclPermission.DENY), super_users=[ALICE])
    assert allowed(a, Op.WRITE)


@pytest.mark.parametrize("granting", [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER, Op.DESCRIBE])
def test_allow_of_read_write_delete_alter_implies_describe(granting: AclOperation) -> None:
    a = authorizer(acl(granting))
    assert allowed(a, Op.DESCRIBE)


@pytest.mark.parametrize("granting", [Op.CREATE, Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS])
def test_other_operations_do_not_imply_describe(granting: AclOperation) -> None:
    assert not allowed(authorizer(acl(granting)), Op.DESCRIBE)


def test_alter_configs_implies_describe_configs_and_all_implies_everything() -> None:
    assert allowed(authorizer(acl(Op.ALTER_CONFIGS)), Op.DESCRIBE_CONFIGS)
    assert not allowed(authorizer(acl(Op.DESCRIBE_CONFIGS)), Op.ALTER_CONFIGS)
    everything = authorizer(acl(Op.ALL))
    assert all(
        allowed(everything, op) for op in (Op.READ, Op.WRITE, Op.DESCRIBE, Op.IDEMPOTENT_WRITE)
    )
    # READ does not imply WRITE.
    assert not allowed(authorizer(acl(Op.READ)), Op.WRITE)


def test_deny_wins_and_implies_nothing() -> None:
    deny_read = acl(Op.READ, permission=AclPermission.DENY)
    a = authorizer(acl(Op.ALL, "*", principal="User:*"), deny_read)
    assert not allowed(a, Op.READ)
    # A DENY READ does not deny DESCRIBE (implications are for ALLOW only) ...
    assert allowed(a, Op.DESCRIBE)
    # ... but DENY ALL denies every operation.
    assert not allowed(
        authorizer(acl(Op.READ), acl(Op.ALL, permission=AclPermission.DENY)), Op.READ
    )


def test_patterns_literal_wildcard_and_prefixed() -> None:
    a = authorizer(acl(Op.READ, "orders-", pattern=PT.PREFIXED), acl(Op.WRITE, "*"))
    assert allowed(a, Op.READ, "orders-eu")
    assert not allowed(a, Op.READ, "order")
    assert allowed(a, Op.WRITE, "anything")
    literal = authorizer(acl(Op.READ, "orders-"))
    assert not allowed(literal, Op.READ, "orders-eu")


def test_principal_and_host_must_match() -> None:
    a = authorizer(acl(Op.READ, host="10.0.0.1"))
    assert allowed(a, Op.READ, host="10.0.0.1")
    assert not allowed(a, Op.READ, host="10.0.0.2")
    assert not allowed(a, Op.READ, principal=BOB)
    assert allowed(authorizer(acl(Op.READ, principal="User:*")), Op.READ, principal=BOB)


def test_write_on_any_topic_is_enough_by_resource_type() -> None:
    """KIP-679's authorizeByResourceType: an ALLOW for exactly the operation (no
    implications) on some name that no DENY dominates."""

    def any_write(a: Authorizer) -> bool:
        return a.authorize_any(ALICE, "10.0.0.1", Op.WRITE, RT.TOPIC)

    assert any_write(authorizer(acl(Op.WRITE, "orders")))
    assert any_write(authorizer(acl(Op.ALL, "orders")))
    assert not any_write(authorizer(acl(Op.READ, "orders")))
    assert not any_write(authorizer())
    assert not any_write(authorizer(acl(Op.WRITE), acl(Op.WRITE, permission=AclPermission.DENY)))
    dominated = acl(Op.WRITE, "or", permission=AclPermission.DENY, pattern=PT.PREFIXED)
    assert not any_write(authorizer(acl(Op.WRITE, "orders"), dominated))
    wildcard_deny = acl(Op.WRITE, "*", permission=AclPermission.DENY)
    assert not any_write(authorizer(acl(Op.WRITE, "x", pattern=PT.PREFIXED), wildcard_deny))
    assert any_write(authorizer(super_users=[ALICE]))


def test_filters_describe_and_delete_as_kafka_matches_them() -> None:
    prefixed = acl(Op.READ, "orders-", pattern=PT.PREFIXED)
    literal = acl(Op.WRITE, "orders-eu")
    wildcard = acl(Op.DESCRIBE, "*")
    group = acl(Op.READ, "orders-eu", resource_type=RT.GROUP)
    a = authorizer(prefixed, literal, wildcard, group)
    assert a.describe(AclFilter()) == [prefixed, literal, wildcard, group]
    # LITERAL / ANY filters compare names exactly; MATCH finds every ACL that applies.
    by_name = AclFilter(resource_type=RT.TOPIC, resource_name="orders-eu")
    assert a.describe(by_name) == [literal]
    match = AclFilter(resource_type=RT.TOPIC, resource_name="orders-eu", pattern_type=PT.MATCH)
    assert a.describe(match) == [prefixed, literal, wildcard]
    assert a.describe(AclFilter(operation=Op.READ)) == [prefixed, group]
    assert a.delete(match) == [prefixed, literal, wildcard]
    assert list(a) == [group]


def test_adding_twice_keeps_one() -> None:
    a = authorizer(acl(Op.READ), acl(Op.READ))
    assert len(a) == 1


@pytest.mark.parametrize(
    ("binding", "message"),
    [
        (acl(Op.ANY), "Invalid operation ANY"),
        (acl(Op.READ, pattern=PT.MATCH), "Invalid patternType MATCH"),
        (acl(Op.READ, resource_type=RT.ANY), "Invalid resourceType ANY"),
        (acl(Op.READ, permission=AclPermission.ANY), "Invalid permissionType ANY"),
        (acl(Op.READ, principal="alice"), "Could not parse principal from `alice`"),
        (
            acl(Op.ALTER, "my-cluster", resource_type=RT.CLUSTER),
            "The only valid name for the CLUSTER",
        ),
        (acl(Op.READ, ""), "Invalid empty resource name"),
    ],
)
def test_invalid_bindings_are_refused_with_kafkas_message(
    binding: AclBinding, message: str
) -> None:
    with pytest.raises(InvalidAcl, match=message.replace("(", r"\(")):
        authorizer(binding)
