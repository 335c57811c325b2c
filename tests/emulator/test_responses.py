"""The helpers handlers build kio answers with: `respond` and `make_from`."""

from __future__ import annotations

from kio.schema.describe_cluster.v0 import response as cluster
from kio.schema.errors import ErrorCode
from kio.schema.offset_for_leader_epoch.v4 import response as epochs

from kafkatest.emulator.server.responses import NO_THROTTLE, make_from, respond
from kafkatest.emulator.state.cluster import BrokerNode


def test_respond_answers_without_error_or_throttling_unless_told() -> None:
    answer = respond(cluster.DescribeClusterResponse, cluster_id="c", controller_id=1, brokers=())
    assert (answer.throttle_time, answer.error_code, answer.error_message) == (
        NO_THROTTLE,
        ErrorCode.none,
        None,
    )
    refused = respond(
        cluster.DescribeClusterResponse,
        ErrorCode.cluster_authorization_failed,
        "no",
        cluster_id="c",
        controller_id=-1,
        brokers=(),
    )
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.cluster_authorization_failed,
        "no",
    )


def test_respond_leaves_out_what_the_class_lacks() -> None:
    """EpochEndOffset has an error code but no message and no throttle time."""
    answer = respond(
        epochs.EpochEndOffset, ErrorCode.fenced_leader_epoch, partition=0, leader_epoch=-1
    )
    assert answer.error_code == ErrorCode.fenced_leader_epoch
    assert not hasattr(answer, "error_message") and not hasattr(answer, "throttle_time")


def test_make_from_copies_the_fields_named_alike_and_values_win() -> None:
    node = BrokerNode(node_id=3, host="h", port=9092)
    broker = make_from(cluster.DescribeClusterBroker, node, broker_id=node.node_id, rack=None)
    assert (broker.broker_id, broker.host, broker.port, broker.rack) == (3, "h", 9092, None)
    moved = make_from(cluster.DescribeClusterBroker, node, broker_id=3, rack="r", port=1)
    assert (moved.port, moved.rack) == (1, "r")
