"""Seed frames: what confluent-kafka's producer, consumer and admin client really send.

A proxy between the clients and an emulator records every request frame; the
clients do what a test session does (create a topic, produce, consume in a group,
commit, describe, delete). Frames with a random header for every API key 0..80
and versions -1..20 are added, so unknown keys and versions are exercised too.
"""

from __future__ import annotations

import random
import socket
import struct
import threading
from contextlib import suppress

_SIZE = struct.Struct(">i")


class RecordingProxy:
    """Forwards one listening port to `upstream`, keeping each client request frame."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.frames: list[bytes] = []
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._closed = True
        self._server.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.upstream)
            threading.Thread(target=self._requests, args=(client, upstream), daemon=True).start()
            threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()

    def _requests(self, client: socket.socket, upstream: socket.socket) -> None:
        buffer = b""
        try:
            while data := client.recv(65536):
                upstream.sendall(data)
                buffer += data
                while len(buffer) >= 4:
                    (size,) = _SIZE.unpack_from(buffer)
                    if len(buffer) < 4 + size:
                        break
                    with self._lock:
                        self.frames.append(buffer[: 4 + size])
                    buffer = buffer[4 + size :]
        except OSError:
            pass
        finally:
            for sock in (client, upstream):
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        with suppress(OSError):
            sink.shutdown(socket.SHUT_RDWR)


def capture_client_frames(upstream: tuple[str, int]) -> list[bytes]:
    """The request frames confluent-kafka sends while it produces, consumes and administers."""
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

    proxy = RecordingProxy(upstream)
    bootstrap = f"127.0.0.1:{proxy.port}"
    quiet: dict[str, str | int | float | bool] = {"bootstrap.servers": bootstrap, "log_level": 0}
    try:
        admin = AdminClient(quiet)
        admin.create_topics([NewTopic("fuzz-seed", 2, 1)])["fuzz-seed"].result(30)
        producer = Producer({**quiet, "linger.ms": 1, "enable.idempotence": True})
        for index in range(50):
            producer.produce("fuzz-seed", f"value-{index}".encode(), key=str(index).encode())
        producer.flush(30)
        consumer = Consumer({**quiet, "group.id": "fuzz-seed", "auto.offset.reset": "earliest"})
        consumer.subscribe(["fuzz-seed"])
        seen = 0
        for _ in range(40):
            seen += len(consumer.consume(100, timeout=0.5))
            if seen >= 50:
                break
        consumer.commit(asynchronous=False)
        consumer.close()
        admin.describe_configs([ConfigResource("topic", "fuzz-seed")])
        admin.list_consumer_groups().result(30)
        admin.create_partitions([NewPartitions("fuzz-seed", 3)])["fuzz-seed"].result(30)
        admin.delete_topics(["fuzz-seed"])["fuzz-seed"].result(30)
    finally:
        proxy.close()
    return list(proxy.frames)


def random_header_frames(rng: random.Random, count: int) -> list[bytes]:
    """Frames whose header names any API key 0..80 and version -1..20, with a random body."""
    frames = []
    for _ in range(count):
        api_key = rng.randint(0, 80)
        version = rng.randint(-1, 20)
        header = struct.pack(">hhih", api_key, version, rng.randint(0, 1 << 30), 4) + b"fuzz"
        if rng.random() < 0.7:
            header += b"\x00"  # header v2's empty tagged-field section
        body = rng.randbytes(rng.randint(0, 64))
        frames.append(_SIZE.pack(len(header) + len(body)) + header + body)
    return frames
