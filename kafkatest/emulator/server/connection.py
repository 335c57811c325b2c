"""One client connection: read frames, answer them strictly in order.

Requests on a connection are handled one at a time, as Kafka mutes a channel
while a request is in flight: a long-polling Fetch therefore holds back the
replies behind it, and clients that match replies to the oldest request are
never confused.
"""

from __future__ import annotations

import asyncio
import logging

from kafkatest.emulator.protocol.framing import FrameDecoder, FrameError
from kafkatest.emulator.server.context import ANONYMOUS
from kafkatest.emulator.server.dispatch import CloseConnection, Dispatcher

log = logging.getLogger("kafkatest.emulator")

_READ_SIZE = 1 << 18


async def serve_connection(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    dispatcher: Dispatcher,
    connection_id: int,
    max_frame_bytes: int,
) -> None:
    peername = writer.get_extra_info("peername")
    peer = f"{peername[0]}:{peername[1]}" if peername else "?"
    decoder = FrameDecoder(max_frame_bytes)
    principal = ANONYMOUS
    try:
        while True:
            data = await reader.read(_READ_SIZE)
            if not data:
                if decoder.pending_bytes:
                    log.info(
                        "client %s disconnected mid-request (%d bytes of a frame unread)",
                        peer,
                        decoder.pending_bytes,
                    )
                return
            for request_frame in decoder.feed(data):
                response = await dispatcher.handle(request_frame, peer, connection_id, principal)
                if response is not None:
                    writer.write(response)
                    await writer.drain()
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
