"""DescribeUserScramCredentials needs DESCRIBE on the cluster; on every backend.

Observed on Kafka 4.1.1 for User:ANONYMOUS without ACLs: the refusal is in the
top-level error, and each user named gets a result carrying it with an empty name
(Kafka's error answer counts the names but does not copy them), in the order and
number named, duplicates included. librdkafka 2.16's
`describe_user_scram_credentials` aborts its process on that answer
(docs/explanation/differences.md), so this test asks with a raw request.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from kio.schema.describe_user_scram_credentials.v0.request import (
    DescribeUserScramCredentialsRequest,
    UserName,
)
from kio.schema.errors import ErrorCode

from kafkatest import Broker

sys.path.insert(0, str(Path(__file__).parents[1] / "emulator"))
from raw_client import ask

DENIED = ErrorCode.cluster_authorization_failed


def describe(broker: Broker, *users: str) -> Any:
    request = DescribeUserScramCredentialsRequest(users=tuple(UserName(name=u) for u in users))
    return ask(broker.bootstrap_servers, 50, 0, request)


def summary(answer: Any) -> tuple[Any, ...]:
    return (
        answer.error_code,
        answer.error_message,
        [(r.user, r.error_code, r.error_message, r.credential_infos) for r in answer.results],
    )


def test_a_user_without_describe_on_the_cluster_is_refused_at_the_top(
    acl_broker: Broker,
) -> None:
    unnamed = ("", DENIED, None, ())
    assert summary(describe(acl_broker, "alice", "bob", "alice")) == (
        DENIED,
        None,
        [unnamed, unnamed, unnamed],
    )
    assert summary(describe(acl_broker)) == (DENIED, None, [])

    acl_broker.allow("User:ANONYMOUS", "DESCRIBE", cluster=True)

    allowed = describe(acl_broker, "nobody-here")
    assert allowed.error_code == ErrorCode.none
    assert [(r.user, r.error_code) for r in allowed.results] == [
        ("nobody-here", ErrorCode.resource_not_found)
    ]
