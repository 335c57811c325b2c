"""Seed frames: what confluent-kafka's producer, consumer and admin client really send.

A proxy between the clients and an emulator records every request frame; the
clients do what a test session does (create a topic, produce, consume in a group,
commit, describe, delete) and what this round's features add: transactions
committed and aborted, a KIP-848 consumer with a regex, ACLs, SCRAM credentials,
offsets, records and cluster descriptions. The frames no client sends on its own (random
headers, SASL exchanges) are made in `frames`.
"""

from __future__ import annotations

import socket
import struct
import threading
import warnings
from collections.abc import Callable
from contextlib import suppress
from typing import Any

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
            try:
                upstream = socket.create_connection(self.upstream)
            except OSError:  # the emulator is closing: so is this client
                client.close()
                continue
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


def capture_client_frames() -> list[bytes]:
    """The request frames confluent-kafka sends while it produces, consumes and administers.

    They are recorded against an in-process emulator that advertises the proxy's
    address, so every connection the clients open (the bootstrap one, then the broker
    Metadata names) goes through the proxy.
    """
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

    from kafkatest.brokers.emulator import EmulatorBroker

    broker = EmulatorBroker()
    broker.start()
    host, port = broker.bootstrap_servers.rsplit(":", 1)
    proxy = RecordingProxy((host, int(port)))
    cluster = broker.state.cluster
    broker.call(lambda: cluster.set_address(cluster.broker_ids[0], "127.0.0.1", proxy.port))
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
        _transactions(quiet)
        _consumer_group_protocol(quiet)
        _admin_surface(admin)
        _cluster_wide_config_requests(bootstrap)
        admin.create_partitions([NewPartitions("fuzz-seed", 3)])["fuzz-seed"].result(30)
        admin.delete_topics(["fuzz-seed"])["fuzz-seed"].result(30)
    finally:
        proxy.close()
        broker.close()
    return list(proxy.frames)


def _transactions(quiet: dict[str, str | int | float | bool]) -> None:
    """InitProducerId with an id, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit,
    EndTxn: a committed and an aborted transaction."""
    from confluent_kafka import Consumer, Producer

    producer = Producer({**quiet, "transactional.id": "fuzz-seed-txn", "linger.ms": 1})
    producer.init_transactions(30)
    consumer = Consumer({**quiet, "group.id": "fuzz-seed-txn", "auto.offset.reset": "earliest"})
    try:
        for commit in (True, False):
            producer.begin_transaction()
            producer.produce("fuzz-seed", b"in a transaction", key=b"txn")
            if commit:
                producer.send_offsets_to_transaction(
                    [_partition("fuzz-seed", 0, 1)], consumer.consumer_group_metadata(), 30
                )
                producer.commit_transaction(30)
            else:
                producer.abort_transaction(30)
    finally:
        consumer.close()


def _partition(topic: str, partition: int, offset: int) -> Any:
    from confluent_kafka import TopicPartition

    return TopicPartition(topic, partition, offset)


def _consumer_group_protocol(quiet: dict[str, str | int | float | bool]) -> None:
    """KIP-848: ConsumerGroupHeartbeat (join, steady, leave) and ConsumerGroupDescribe."""
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            **quiet,
            "group.id": "fuzz-seed-848",
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe(["^fuzz-.*"])
    for _ in range(10):
        consumer.consume(10, timeout=0.3)
        if consumer.assignment():
            break
    consumer.close()


def _admin_surface(admin: object) -> None:
    """ACLs, SCRAM credentials, groups, offsets, records, cluster and leaders."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicCollection
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        OffsetSpec,
        ResourcePatternType,
        ResourceType,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    client: Any = admin
    binding = AclBinding(
        ResourceType.TOPIC,
        "fuzz-",
        ResourcePatternType.PREFIXED,
        "User:fuzz",
        "*",
        AclOperation.READ,
        AclPermissionType.ALLOW,
    )
    anything: Any = None  # a filter's wildcard (the stubs say str)
    matching = AclBindingFilter(
        ResourceType.ANY,
        anything,
        ResourcePatternType.ANY,
        anything,
        anything,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    calls: list[Callable[[], object]] = [
        lambda: client.create_acls([binding])[binding].result(30),
        lambda: client.describe_acls(matching).result(30),
        lambda: client.delete_acls([matching])[matching].result(30),
        lambda: client.alter_user_scram_credentials(
            [
                UserScramCredentialUpsertion(
                    "fuzz", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"secret"
                )
            ]
        )["fuzz"].result(30),
        lambda: client.describe_user_scram_credentials(["fuzz"])["fuzz"].result(30),
        lambda: client.describe_consumer_groups(["fuzz-seed", "fuzz-seed-848"]),
        lambda: client.list_consumer_group_offsets([ConsumerGroupTopicPartitions("fuzz-seed")])[
            "fuzz-seed"
        ].result(30),
        lambda: client.list_offsets({_partition("fuzz-seed", 0, 0): OffsetSpec.latest()}),
        lambda: client.delete_records([_partition("fuzz-seed", 0, 1)]),
        lambda: client.describe_topics(TopicCollection(["fuzz-seed"])),
        lambda: client.describe_cluster().result(30),
        *_broker_config_calls(client),
    ]
    for call in calls:
        with suppress(Exception):  # what each answers does not matter: its frames do
            call()


def _broker_config_calls(client: Any) -> list[Callable[[], object]]:
    """Broker configs described and changed, per broker and cluster-wide, both ways."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

    def incremental(name: str, operation: AlterConfigOpType, value: str | None) -> object:
        resource = ConfigResource(
            "broker",
            name,
            incremental_configs=[
                ConfigEntry("log.retention.ms", value, incremental_operation=operation)
            ],
        )
        return client.incremental_alter_configs([resource])[resource].result(30)

    legacy = ConfigResource("broker", "1", set_config={"message.max.bytes": "1048588"})

    def legacy_alter() -> object:
        # The legacy API on purpose (its frames belong in the corpus): no warning.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return client.alter_configs([legacy])[legacy].result(30)

    return [
        lambda: incremental("1", AlterConfigOpType.SET, "604800000"),
        lambda: incremental("1", AlterConfigOpType.DELETE, None),
        legacy_alter,
        lambda: client.describe_configs([ConfigResource("broker", "1")])[
            ConfigResource("broker", "1")
        ].result(30),
    ]


def _cluster_wide_config_requests(bootstrap: str) -> None:
    """The cluster-wide level (resource ""), which librdkafka will not name (an
    incremental change, a legacy replace and a describe), and the broker's loggers,
    which it has no type for: sent as Kafka's tools send them."""
    import io

    from kio.schema.alter_configs.v2 import request as legacy
    from kio.schema.describe_configs.v4 import request as describe
    from kio.schema.incremental_alter_configs.v1 import request as incremental
    from kio.serial import entity_writer
    from kio.static.primitive import i8

    from kafkatest.emulator.protocol import frame

    broker, logger = i8(4), i8(8)

    def alter(kind: Any, name: str, key: str, value: str) -> tuple[int, int, Any]:
        config = incremental.AlterableConfig(name=key, config_operation=i8(0), value=value)
        resource = incremental.AlterConfigsResource(
            resource_type=kind, resource_name=name, configs=(config,)
        )
        return (
            44,
            1,
            incremental.IncrementalAlterConfigsRequest(resources=(resource,), validate_only=False),
        )

    def described(kind: Any, name: str, synonyms: bool, docs: bool) -> tuple[int, int, Any]:
        resource = describe.DescribeConfigsResource(
            resource_type=kind, resource_name=name, configuration_keys=None
        )
        return (
            32,
            4,
            describe.DescribeConfigsRequest(
                resources=(resource,), include_synonyms=synonyms, include_documentation=docs
            ),
        )

    requests: list[tuple[int, int, Any]] = [
        alter(broker, "", "log.retention.ms", "604800000"),
        (33, 2, legacy.AlterConfigsRequest(
            resources=(legacy.AlterConfigsResource(
                resource_type=broker, resource_name="", configs=(
                    legacy.AlterableConfig(name="min.insync.replicas", value="1"),),
            ),),
            validate_only=False,
        )),
        described(broker, "", synonyms=True, docs=False),
        alter(logger, "1", "kafka.log.LogCleaner", "DEBUG"),
        described(logger, "1", synonyms=False, docs=True),
    ]  # fmt: skip
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        answers = sock.makefile("rb")  # its read(n) waits for all n bytes
        for correlation, (api_key, version, request) in enumerate(requests):
            body = io.BytesIO()
            entity_writer(type(request))(body, request)
            header = struct.pack(">hhih", api_key, version, correlation, 4) + b"fuzz\x00"
            sock.sendall(frame(header + body.getvalue()))
            size = answers.read(4)
            if len(size) < 4 or not answers.read(_SIZE.unpack(size)[0]):
                raise ConnectionError(f"the emulator closed the connection on API {api_key}")
