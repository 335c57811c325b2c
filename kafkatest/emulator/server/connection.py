"""One client connection: read frames, answer them strictly in order.

Requests on a connection are handled one at a time, as Kafka mutes a channel
while a request is in flight: a long-polling Fetch therefore holds back the
replies behind it, and clients that match replies to the oldest request are
never confused.
"""

from __future__ import annotations

import asyncio
import logging
import time

from kafkatest.emulator.protocol.framing import FrameDecoder, FrameError
from kafkatest.emulator.protocol.replies import Reply
from kafkatest.emulator.server.context import ANONYMOUS
from kafkatest.emulator.server.dispatch import CloseConnection, Dispatcher
from kafkatest.emulator.server.inbox import ClientInbox, NotifyingStreamReader
from kafkatest.emulator.server.pacing import Pacer
from kafkatest.emulator.server.sasl import (
    SASL_MAX_RECEIVE_BYTES,
    AuthenticationFailed,
    SaslAuthenticator,
)
from kafkatest.emulator.server.security import ListenerSecurity, tls_principal
from kafkatest.emulator.server.timings import RequestTimings

log = logging.getLogger("kafkatest.emulator")

_READ_SIZE = 1 << 18
#: Replies larger than this are written piece by piece (`send_reply`).
STREAMED_REPLY_BYTES = 1 << 20


async def send_reply(writer: asyncio.StreamWriter, reply: Reply) -> None:
    """Write one reply and wait until the transport has room again.

    Python 3.11's `writelines` joins its buffers into one, so a large reply would be
    copied whole into one allocation (270 MB for a DescribeConfigs naming a broker
    10,000 times, its pieces all one shared encoding) before the first byte leaves;
    a large reply is therefore handed to the transport a piece at a time, each
    after the client has taken most of the ones before, which bounds what is
    buffered. A client that reads as fast as the reply is written never makes
    `drain` wait, so the loop is also given back every slice (`Pacer`): other
    connections' requests are answered while the reply goes out.
    """
    if len(reply) == 1 or sum(len(piece) for piece in reply) <= STREAMED_REPLY_BYTES:
        writer.writelines(reply)
        await writer.drain()
        return
    pacer = Pacer()
    for piece in reply:
        writer.write(piece)
        await writer.drain()
        await pacer.breathe()


async def serve_connection(
    reader: NotifyingStreamReader,
    writer: asyncio.StreamWriter,
    dispatcher: Dispatcher,
    connection_id: int,
    max_frame_bytes: int,
    security: ListenerSecurity | None = None,
    timings: RequestTimings | None = None,
) -> None:
    peername = writer.get_extra_info("peername")
    peer = f"{peername[0]}:{peername[1]}" if peername else "?"
    decoder = FrameDecoder(max_frame_bytes)
    inbox = ClientInbox(reader, decoder)
    principal = ANONYMOUS

    async def serve(frames: list[bytes]) -> None:
        for index, request_frame in enumerate(frames):
            inbox.queued_frames = len(frames) - index - 1
            response = await dispatcher.handle(request_frame, peer, connection_id, principal, inbox)
            if response is not None:
                await send_reply(writer, response)

    try:
        if security is not None:
            authenticated = await _authenticate(
                reader, writer, dispatcher, connection_id, peer, security, decoder
            )
            if authenticated is None:
                return
            principal, early = authenticated
            await serve(early)
        if timings is not None:
            await _serve_timed(
                reader, writer, dispatcher, connection_id, principal, peer, inbox, timings
            )
            return
        while True:
            data = await reader.read(_READ_SIZE)
            if not data:
                _log_disconnect(peer, decoder)
                return
            await serve(decoder.feed(data))
    except AuthenticationFailed as exc:
        log.info("authentication of %s failed: %s", peer, exc)
    except FrameError as exc:
        log.warning("closing connection from %s: %s", peer, exc)
    except CloseConnection as exc:
        log.warning("closing connection from %s: %s", peer, exc)
    except (ConnectionError, asyncio.IncompleteReadError) as exc:
        log.info("connection from %s lost: %s", peer, exc)
    except Exception:
        # A bug (or a fault hook) failing must cost one connection, not the server.
        log.exception("closing connection from %s after an unexpected error", peer)
    finally:
        writer.close()


def _log_disconnect(peer: str, decoder: FrameDecoder) -> None:
    if decoder.pending_bytes:
        log.info(
            "client %s disconnected mid-request (%d bytes of a frame unread)",
            peer,
            decoder.pending_bytes,
        )


async def _serve_timed(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    dispatcher: Dispatcher,
    connection_id: int,
    principal: str,
    peer: str,
    inbox: ClientInbox,
    timings: RequestTimings,
) -> None:
    """The request loop, with each request's phases recorded (see `timings`)."""
    answered = time.perf_counter()
    while True:
        data = await reader.read(_READ_SIZE)
        arrived = time.perf_counter()
        if not data:
            _log_disconnect(peer, inbox.decoder)
            return
        idle = arrived - answered
        frames = inbox.decoder.feed(data)
        for index, request_frame in enumerate(frames):
            inbox.queued_frames = len(frames) - index - 1
            started = time.perf_counter()
            response = await dispatcher.handle(request_frame, peer, connection_id, principal, inbox)
            handled = time.perf_counter()
            if response is not None:
                await send_reply(writer, response)
            answered = time.perf_counter()
            api_key = int.from_bytes(request_frame[:2], "big", signed=True)
            timings.record(api_key, arrived, started, handled, answered, idle)
            idle = 0.0  # the frames after the first in one read did not wait for the client


async def _authenticate(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    dispatcher: Dispatcher,
    connection_id: int,
    peer: str,
    security: ListenerSecurity,
    decoder: FrameDecoder,
) -> tuple[str, list[bytes]] | None:
    """The connection's principal and any frames that followed the exchange in the
    same read, or None if the client left before authenticating.

    TLS is already done (asyncio completed the handshake before calling us); on a
    SASL listener, frames go to the SASL exchange until it succeeds, with Kafka's
    smaller frame limit for unauthenticated clients.
    """
    if not security.sasl:
        return tls_principal(writer), []
    authenticator = SaslAuthenticator(
        security.advertised_mechanisms,
        dispatcher.credentials,
        dispatcher,
        peer,
        connection_id,
    )
    limit = decoder.max_frame_bytes
    decoder.max_frame_bytes = min(limit, SASL_MAX_RECEIVE_BYTES)
    try:
        while authenticator.principal is None:
            data = await reader.read(_READ_SIZE)
            if not data:
                return None
            frames = decoder.feed(data)
            for index, request_frame in enumerate(frames):
                if authenticator.principal is not None:
                    return authenticator.principal, frames[index:]
                try:
                    reply = await authenticator.on_frame(request_frame)
                except AuthenticationFailed as exc:
                    if exc.reply is not None:
                        writer.writelines(exc.reply)
                        await writer.drain()
                    raise
                if reply is not None:
                    writer.writelines(reply)
                    await writer.drain()
    finally:
        decoder.max_frame_bytes = limit
    return authenticator.principal, []
