"""UpdateFeatures (kafka-features) on every backend: the emulated Kafka's controller
rules and words, what each level change does to what ApiVersions finalizes, and that
group.version 0 turns KIP-848 groups off. Each expectation was first observed on
real Kafka (4.1.1, then 4.3.1, whose metadata.version 30 changed the metadata format,
so no downgrade of it is allowed); run with ``--kafka-backend=emulator,kafka``.

The session's broker is shared, so a test that changes a feature level puts it back.
"""

from __future__ import annotations

import datetime
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from admin_requests import (
    FAILED,
    SAFE,
    UNSAFE,
    UPDATE_FEATURES,
    UPGRADE,
    finalized,
    finalized_when,
    request_entity,
    update_features,
)
from kio.schema.errors import ErrorCode
from kio.static.primitive import i8, i16, i32
from raw_client import ask

from kafkatest import Broker
from kafkatest.pytest_plugin import unique_topic_name

CONSUMER_GROUP_HEARTBEAT, CONSUMER_GROUP_DESCRIBE = 68, 69


# -- UpdateFeatures ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("updates", "refusal"),
    [
        ([], None),
        ([("group.version", 1, UPGRADE)], None),
        ([("group.version", 0, SAFE)], None),
        ([("group.version", 0, UNSAFE)], None),
        ([("transaction.version", 1, SAFE)], None),
        ([("eligible.leader.replicas.version", 0, SAFE)], None),
        ([("kraft.version", 1, UPGRADE)], None),
        ([("group.version", 1, UPGRADE), ("group.version", 1, UPGRADE)], None),
        (
            [("nope.version", 1, UPGRADE)],
            "Invalid update version 1 for feature nope.version. "
            "Local controller 1 does not support this feature.",
        ),
        (
            [("group.version", 5, UPGRADE)],
            "Invalid update version 5 for feature group.version. "
            "Local controller 1 only supports versions 0-1",
        ),
        (
            [("group.version", 0, UPGRADE)],
            "Invalid update version 0 for feature group.version. Can't downgrade the version "
            "of this feature without setting the upgrade type to either safe or unsafe downgrade.",
        ),
        (
            [("group.version", -1, SAFE)],
            "Invalid update version -1 for feature group.version. "
            "A feature version cannot be less than 0.",
        ),
        (
            [("group.version", 1, 7)],
            "Invalid update version 1 for feature group.version. "
            "The controller does not support the given upgrade type.",
        ),
        (
            [("metadata.version", 6, UNSAFE)],
            "Invalid update version 6 for feature metadata.version. "
            "Local controller 1 only supports versions 7-30",
        ),
        (
            [("metadata.version", 31, UPGRADE)],
            "Invalid update version 31 for feature metadata.version. "
            "Local controller 1 only supports versions 7-30",
        ),
        (
            [("metadata.version", 29, SAFE)],
            "Unsupported metadata.version downgrade from 30 to 29. Refusing to perform the "
            "requested downgrade because it might delete metadata information.",
        ),
        (
            [("metadata.version", 26, UNSAFE)],
            "Unsupported metadata.version downgrade from 30 to 26. Unsafe metadata downgrade "
            "is not supported in this version.",
        ),
        (
            [("metadata.version", 22, SAFE)],
            "Unsupported metadata.version downgrade from 30 to 22. Refusing to perform the "
            "requested downgrade because it might delete metadata information.",
        ),
        (
            [("metadata.version", 7, UNSAFE)],
            "Unsupported metadata.version downgrade from 30 to 7. Unsafe metadata downgrade "
            "is not supported in this version.",
        ),
        # One bad update fails them all.
        (
            [("group.version", 0, SAFE), ("nope", 1, UPGRADE)],
            "Invalid update version 1 for feature nope. "
            "Local controller 1 does not support this feature.",
        ),
    ],
)
def test_update_features_validates_as_kafkas_controller(
    kafka_broker: Broker, updates: list[tuple[str, int, int]], refusal: str | None
) -> None:
    before = finalized(kafka_broker)[0]
    response = update_features(kafka_broker, *updates, validate_only=True)
    if refusal is None:
        assert (response.error_code, response.error_message) == (ErrorCode.none, None)
    else:
        assert response.error_code == ErrorCode.invalid_update_version
        assert response.error_message == FAILED + refusal
    assert finalized(kafka_broker)[0] == before  # validate_only changes nothing


@pytest.fixture
def restore_features(kafka_broker: Broker) -> Iterator[None]:
    """Puts the shared broker's feature levels back however the test ends."""
    before = finalized(kafka_broker)[0]
    yield
    now = finalized(kafka_broker)[0]
    changes = [
        (name, level, UPGRADE if level > now.get(name, 0) else SAFE)
        for name, level in before.items()
        if now.get(name, 0) != level
    ]
    changes += [(name, 0, SAFE) for name in now if name not in before]
    if changes:
        assert update_features(kafka_broker, *changes).error_code == ErrorCode.none
        finalized_when(kafka_broker, lambda levels: levels == before)


def consumer_group_heartbeat(broker: Broker) -> Any:
    request = request_entity(
        "consumer_group_heartbeat",
        1,
        "ConsumerGroupHeartbeatRequest",
        group_id=unique_topic_name("gv"),
        member_id=str(uuid.uuid4()),
        member_epoch=i32(0),
        instance_id=None,
        rack_id=None,
        rebalance_timeout=datetime.timedelta(seconds=30),
        subscribed_topic_names=("t",),
        subscribed_topic_regex=None,
        server_assignor=None,
        topic_partitions=(),
    )
    return ask(broker.bootstrap_servers, CONSUMER_GROUP_HEARTBEAT, 1, request)


@pytest.mark.usefixtures("restore_features")
def test_group_version_0_turns_kip_848_groups_off_and_1_back_on(kafka_broker: Broker) -> None:
    levels, epoch = finalized(kafka_broker)
    assert levels["group.version"] == 1

    assert update_features(kafka_broker, ("group.version", 0, SAFE)).error_code == ErrorCode.none

    # Level 0 is left out.
    _, epoch_off = finalized_when(kafka_broker, lambda levels: "group.version" not in levels)
    assert epoch_off > epoch
    off = consumer_group_heartbeat(kafka_broker)
    assert (off.error_code, off.member_id, off.member_epoch) == (
        ErrorCode.unsupported_version,
        None,
        0,
    )
    describe = request_entity(
        "consumer_group_describe",
        1,
        "ConsumerGroupDescribeRequest",
        group_ids=("g1", "g2"),
        include_authorized_operations=False,
    )
    described = ask(kafka_broker.bootstrap_servers, CONSUMER_GROUP_DESCRIBE, 1, describe)
    assert [(g.group_id, g.error_code, g.group_state) for g in described.groups] == [
        ("g1", ErrorCode.unsupported_version, ""),
        ("g2", ErrorCode.unsupported_version, ""),
    ]

    assert update_features(kafka_broker, ("group.version", 1, UPGRADE)).error_code == 0
    finalized_when(kafka_broker, lambda levels: levels.get("group.version") == 1)
    # As a client does: find the coordinator first (Kafka then creates
    # __consumer_offsets), and ask again while it loads.
    find = request_entity(
        "find_coordinator", 4, "FindCoordinatorRequest", key_type=i8(0), coordinator_keys=("g",)
    )
    ask(kafka_broker.bootstrap_servers, 10, 4, find)
    for _ in range(100):
        on = consumer_group_heartbeat(kafka_broker)
        if on.error_code not in (
            ErrorCode.not_coordinator,
            ErrorCode.coordinator_not_available,
            ErrorCode.coordinator_load_in_progress,
        ):
            break
        time.sleep(0.1)
    # A new group starts at epoch 1 (Kafka 4.3): its first member gets 2.
    assert on.error_code == ErrorCode.none and on.member_epoch == 2


@pytest.mark.usefixtures("restore_features")
def test_feature_levels_go_down_and_back_up(kafka_broker: Broker) -> None:
    """What kafka-features downgrade/upgrade do to what describeFeatures shows."""
    steps: list[tuple[tuple[str, int, int], dict[str, int]]] = [
        (("transaction.version", 1, SAFE), {"transaction.version": 1}),
        (("transaction.version", 0, SAFE), {}),
        (("group.version", 0, SAFE), {}),
        (("eligible.leader.replicas.version", 0, UNSAFE), {}),
    ]
    base = finalized(kafka_broker)[0]
    for update, shown in steps:
        assert update_features(kafka_broker, update).error_code == ErrorCode.none
        name = update[0]
        finalized_when(
            kafka_broker,
            lambda levels, name=name, shown=shown: (
                {k: v for k, v in levels.items() if k == name} == shown
            ),
        )
    # Going up again needs the upgrade type; back where it started.
    bad = update_features(kafka_broker, ("group.version", 1, SAFE))
    assert bad.error_message == FAILED + (
        "Invalid update version 1 for feature group.version. Can't downgrade to a newer version."
    )
    restored = update_features(
        kafka_broker,
        ("transaction.version", 2, UPGRADE),
        ("group.version", 1, UPGRADE),
        ("eligible.leader.replicas.version", 1, UPGRADE),
    )
    assert restored.error_code == ErrorCode.none
    finalized_when(kafka_broker, lambda levels: levels == base)


def test_update_features_v1_answers_per_feature(kafka_broker: Broker) -> None:
    ok = update_features(kafka_broker, ("group.version", 1, UPGRADE), validate_only=True, version=1)
    assert [(r.feature, r.error_code, r.error_message) for r in ok.results] == [
        ("group.version", ErrorCode.none, "NONE")
    ]
    bad = update_features(kafka_broker, ("nope", 1, UPGRADE), validate_only=True, version=1)
    assert (bad.error_code, bad.results) == (ErrorCode.invalid_update_version, ())


def test_update_features_v0_takes_every_update_as_an_upgrade(kafka_broker: Broker) -> None:
    """v0's allow_downgrade is no longer read: a v0 downgrade is refused."""
    key = request_entity(
        "update_features",
        0,
        "FeatureUpdateKey",
        feature="group.version",
        max_version_level=i16(0),
        allow_downgrade=True,
    )
    request = request_entity("update_features", 0, "UpdateFeaturesRequest", feature_updates=(key,))
    response = ask(kafka_broker.bootstrap_servers, UPDATE_FEATURES, 0, request)
    assert response.error_code == ErrorCode.invalid_update_version
    assert "without setting the upgrade type" in response.error_message
    assert finalized(kafka_broker)[0]["group.version"] == 1
