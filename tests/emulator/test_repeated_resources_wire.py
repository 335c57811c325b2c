"""A request naming one resource many times, on every backend.

Observed on Kafka 4.1.1: a DescribeConfigs v1 naming the broker's own id 1,000
times is answered with 1,000 identical results of its 318 configs (27 MB), 10,000
times with 10,000 of them (270 MB): Kafka answers every naming, and its request
size limit is what bounds the work. Meanwhile the broker keeps answering other
clients. The emulator once built and encoded every naming anew on the event loop
every client shares: 7.5 s per 1,000 namings during which no other request was
answered. It now answers the same bytes, built once per distinct resource, and
sends them without holding the loop.
"""

from __future__ import annotations

import socket
import struct
import time

from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.describe_configs.v1.request import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
)
from kio.static.primitive import i8
from raw_client import connect, encode, read_frame, request_frame
from test_broker_configs_wire import broker_id

from kafkatest import Broker

DESCRIBE_CONFIGS, API_VERSIONS = 32, 18
BROKER = i8(4)
#: Enough namings that building each anew (~7.5 ms apiece) holds the loop for seconds.
NAMINGS = 2_000
#: Very generous: the other client's answer takes milliseconds on both backends,
#: and took NAMINGS x 7.5 ms or more on the emulator before the fix.
OTHER_CLIENT_WAIT_S = 10.0


def describe_frame(node: str, namings: int, correlation_id: int) -> bytes:
    resource = DescribeConfigsResource(
        resource_type=BROKER, resource_name=node, configuration_keys=None
    )
    request = DescribeConfigsRequest(resources=(resource,) * namings, include_synonyms=True)
    return request_frame(DESCRIBE_CONFIGS, 1, correlation_id, encode(request))


def read_large_frame(sock: socket.socket) -> bytes:
    """One response frame read into a buffer of its size (the answer is tens of MB)."""
    header = bytearray(4)
    view = memoryview(header)
    while view:
        got = sock.recv_into(view)
        assert got, "the broker closed the connection"
        view = view[got:]
    (size,) = struct.unpack(">i", header)
    body = bytearray(size)
    view = memoryview(body)
    while view:
        got = sock.recv_into(view)
        assert got, "the broker closed the connection mid-answer"
        view = view[got:]
    return bytes(body)


def test_every_naming_is_answered_alike_while_others_are_served(kafka_broker: Broker) -> None:
    node = broker_id(kafka_broker)
    with connect(kafka_broker.bootstrap_servers) as sock:
        sock.sendall(describe_frame(node, 1, 1))
        single = read_frame(sock)
    assert single is not None
    # correlation id, throttle time, count of results, the one result
    one_result = single[12:]
    assert struct.unpack(">i", single[8:12]) == (1,)

    with (
        connect(kafka_broker.bootstrap_servers) as big,
        connect(kafka_broker.bootstrap_servers) as other,
    ):
        big.settimeout(300)
        big.sendall(describe_frame(node, NAMINGS, 2))
        time.sleep(0.2)  # the big request is in the broker's hands
        other.settimeout(OTHER_CLIENT_WAIT_S)
        other.sendall(
            request_frame(
                API_VERSIONS,
                3,
                3,
                encode(
                    ApiVersionsRequest(
                        client_software_name="kafkatest", client_software_version="0"
                    )
                ),
            )
        )
        answered = read_frame(other)  # times out if the big request holds the broker
        assert answered is not None and answered[:4] == struct.pack(">i", 3)
        reply = read_large_frame(big)

    assert reply[:4] == struct.pack(">i", 2)
    assert struct.unpack(">i", reply[8:12]) == (NAMINGS,)
    assert len(reply) == 12 + NAMINGS * len(one_result)
    assert reply[12:] == one_result * NAMINGS
