"""How the emulator keeps a request whose work the client sizes off everyone's loop.

A DescribeConfigs naming one resource 10,000 times (80 KB) is answered by Kafka
4.1 with 10,000 results (270 MB; `test_repeated_resources_wire.py`). The emulator
describes and encodes each distinct resource once per request and refers to that
encoding for every naming, gives the loop back between distinct resources, and
hands a large reply to the transport a piece at a time. These tests pin that
structure rather than a time, which a loaded machine would make flaky.
"""

from __future__ import annotations

import asyncio
import datetime
from typing import Any

from kio.schema.describe_configs.v1.request import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
)
from kio.schema.describe_configs.v4 import response as v4
from kio.schema.errors import ErrorCode
from kio.static.primitive import i8
from raw_client import encode, request_frame

from kafkatest.emulator.protocol.messages import encode_entity, encode_response
from kafkatest.emulator.protocol.replies import (
    LARGE_PIECE,
    EncodedItems,
    Reply,
    encode_reply,
    reply_bytes,
)
from kafkatest.emulator.server.connection import STREAMED_REPLY_BYTES, send_reply
from kafkatest.emulator.server.dispatch import Dispatcher
from kafkatest.emulator.server.faults import NoFaults
from kafkatest.emulator.state import EmulatorState

BROKER, GROUP = 4, 32


def dispatcher() -> Dispatcher:
    state = EmulatorState()
    state.cluster.set_address(1, "127.0.0.1", 9092)
    return Dispatcher(state, 1, NoFaults())


def describe(*resources: tuple[int, str]) -> bytes:
    """The DescribeConfigs v1 request frame (without its size) naming `resources`."""
    request = DescribeConfigsRequest(
        resources=tuple(
            DescribeConfigsResource(
                resource_type=i8(kind), resource_name=name, configuration_keys=None
            )
            for kind, name in resources
        ),
        include_synonyms=True,
    )
    return request_frame(32, 1, 7, encode(request))[4:]


def test_a_resource_named_many_times_is_encoded_once_and_sent_by_reference() -> None:
    namings = 1_000
    answer = asyncio.run(dispatcher().handle(describe(*[(BROKER, "1")] * namings), "test", 1))
    assert answer is not None
    shared = [piece for piece in answer if len(piece) >= LARGE_PIECE]
    # One encoding of the broker's 318 configs, referred to once per naming.
    assert len(shared) == namings
    assert len({id(piece) for piece in shared}) == 1
    single = asyncio.run(dispatcher().handle(describe((BROKER, "1")), "test", 1))
    assert single is not None
    assert reply_bytes(answer)[16:] == reply_bytes(single)[16:] * namings


def test_distinct_resources_give_the_loop_back_between_them() -> None:
    """Every other connection is served on the same loop: a handler working through
    thousands of distinct resources lets them run in between."""

    async def run() -> tuple[int, Reply | None]:
        ticks = 0

        async def other_client() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        ticker = asyncio.get_running_loop().create_task(other_client())
        await asyncio.sleep(0)
        started = ticks
        request = describe(*[(GROUP, f"group-{n}") for n in range(500)])
        answer = await dispatcher().handle(request, "test", 1)
        ran_meanwhile = ticks - started
        ticker.cancel()
        return ran_meanwhile, answer

    ran_meanwhile, answer = asyncio.run(run())
    assert answer is not None
    assert ran_meanwhile > 0


def test_shared_encodings_are_kio_s_encoding() -> None:
    def result(name: str) -> Any:
        return v4.DescribeConfigsResult(
            error_code=ErrorCode.none,
            error_message="",
            resource_type=i8(BROKER),
            resource_name=name,
            configs=(),
        )

    first, second = result("1"), result("x" * LARGE_PIECE)
    plain = v4.DescribeConfigsResponse(
        throttle_time=datetime.timedelta(0), results=(first, second, first, second)
    )
    # `+` as the ACL layer appends refused resources to the served ones.
    items = EncodedItems((first, second), (encode_entity(first), None)) + (first, second)  # noqa: RUF005
    assert items == plain.results and list(items) == list(plain.results)
    shared = v4.DescribeConfigsResponse(throttle_time=datetime.timedelta(0), results=items)
    assert encode_response(shared) == encode_response(plain)
    assert reply_bytes(encode_reply(b"head", shared)) == reply_bytes(encode_reply(b"head", plain))


class _Transport:
    """What `send_reply` does with a StreamWriter, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def write(self, data: Any) -> None:
        self.calls.append(("write", data))

    def writelines(self, data: Any) -> None:
        self.calls.append(("writelines", list(data)))

    async def drain(self) -> None:
        self.calls.append(("drain", None))


def test_a_large_reply_is_written_a_piece_at_a_time() -> None:
    """Python 3.11's writelines would join a 270 MB reply into one buffer first."""
    piece = bytes(LARGE_PIECE * 4)
    large: Reply = [bytearray(8), *[piece] * (STREAMED_REPLY_BYTES // len(piece) + 1)]
    transport = _Transport()
    asyncio.run(send_reply(transport, large))  # type: ignore[arg-type]
    assert transport.calls == [
        call for part in large for call in (("write", part), ("drain", None))
    ]
    assert all(data is part for (_, data), part in zip(transport.calls[::2], large, strict=True))

    small: Reply = [bytearray(8), piece]
    transport = _Transport()
    asyncio.run(send_reply(transport, small))  # type: ignore[arg-type]
    assert transport.calls == [("writelines", small), ("drain", None)]


def test_the_broker_s_configs_are_walked_once_per_set_of_levels(monkeypatch: Any) -> None:
    """Each topic a CreateTopics creates and each group an alter changes starts from
    the broker's 318 configs: 2,500 topics once took 17 s, 10,000 groups 41 s."""
    from kafkatest.emulator.state import broker_configs as module

    walked: list[str] = []
    real = module._described

    def counting(entry: Any, *args: Any, **kwargs: Any) -> Any:
        walked.append(entry.name)
        return real(entry, *args, **kwargs)

    monkeypatch.setattr(module, "_described", counting)
    marker = f"test-{id(walked)}"  # levels no other test has asked about
    first = module.broker_configs([(module.STATIC_BROKER_CONFIG, {"broker.rack": marker})])
    again = module.broker_configs([(module.STATIC_BROKER_CONFIG, {"broker.rack": marker})])
    assert again == first
    assert len(walked) == len(module.kafka_defaults())
    changed = module.broker_configs([(module.STATIC_BROKER_CONFIG, {"broker.rack": marker + "!"})])
    assert len(walked) == 2 * len(module.kafka_defaults())
    assert {c.name: c.value for c in changed}["broker.rack"] == marker + "!"
