"""How any client reaches a broker: its settings for each kind of client, and the
harness's own cached admin client and producer.

A broker may be plain, TLS or SASL; tests, Spark jobs and Java tools each need that
said in their own dialect. Kept apart from what the clients then do (topics,
offsets, records) so that every way of connecting is decided in one place.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from kafkatest.brokers.acl_client import harness_listener_config
from kafkatest.errors import BrokerError, UnsupportedOperation

if TYPE_CHECKING:
    from kafkatest.brokers.security import BrokerSecurity
    from kafkatest.security import DelegationToken

#: The harness's one producer: idempotent, keys partitioned as Java partitions them,
#: and no metadata refresh on a timer. librdkafka's (every 5 minutes) asks for every
#: topic the producer ever wrote to, allowing auto-creation (a producer's default), so
#: it brought back a topic a test had deleted: in the middle of the test (a fault's
#: `delete_topic`) or after it (`kafka_topic`'s teardown). A write still refreshes
#: what it needs on an error (a moved leader); the faults that change a topic's
#: partitions renew the producer.
HELPER_PRODUCER: dict[str, object] = {
    "enable.idempotence": True,
    "partitioner": "murmur2_random",
    "linger.ms": 5,
    "message.timeout.ms": 60000,
    "topic.metadata.refresh.interval.ms": -1,
}


class _LibrdkafkaLog:
    """Where librdkafka's log lines go (confluent-kafka calls ``log(level, fmt, *args)``).

    A line that says librdkafka is retrying (``Coordinator load in progress:
    retrying`` while a broker starts) is logged at DEBUG: the retry is librdkafka's own
    business and usually succeeds, and at WARNING it showed in every ``-rA`` run.
    """

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger

    def log(self, level: int, msg: str, *args: object) -> None:
        text = msg % args if args else msg
        if level >= logging.WARNING and text.rstrip().endswith("retrying"):
            level = logging.DEBUG
        self.logger.log(level, "%s", text)


_LIBRDKAFKA_LOG = _LibrdkafkaLog(logging.getLogger("kafkatest.librdkafka"))


class ClientConnections(ABC):
    """Client settings and cached clients shared by every backend."""

    _admin_client: AdminClient | None = None
    _producer: Producer | None = None
    _client_lock = threading.Lock()
    #: Set by a backend started with security; None is a PLAINTEXT listener.
    security_runtime: BrokerSecurity | None = None

    @property
    @abstractmethod
    def bootstrap_servers(self) -> str:
        """``host:port[,host:port]`` for clients, Spark's ``kafka.bootstrap.servers``."""

    def client_config(
        self,
        user: str | None = None,
        mechanism: str | None = None,
        *,
        token: DelegationToken | None = None,
    ) -> dict[str, Any]:
        """confluent-kafka (librdkafka) settings to reach this broker as `user`.

        Without a user: the harness's own settings (its admin user on a secured
        broker), which the helpers, seeding, sink readers and faults use; with ACLs,
        those log in as the super user User:kafkatest on the harness's own listener
        (`_harness_login`). On a secured broker the dict carries ``security.protocol``,
        the SASL login (`mechanism` defaults to the broker's first) and the CA file to
        trust. Refused where `check_caller` refuses (the emulator's own thread).
        """
        self.check_caller()
        if token is not None:
            raise UnsupportedOperation(
                "librdkafka (confluent-kafka) cannot log in with a delegation token: its SCRAM "
                "client has no way to send the tokenauth extension. Use a Java client: "
                "spark_options(token=...) or java_client_properties(path, token=...)"
            )
        # librdkafka's own log lines go to Python logging, so pytest shows them only
        # for a failing test instead of spraying stderr during broker restarts.
        config: dict[str, Any] = {"bootstrap.servers": self.bootstrap_servers}
        if user is None:
            config["client.id"] = "kafkatest"
        config["logger"] = _LIBRDKAFKA_LOG
        if self.security_runtime is not None:
            config.update(self.security_runtime.librdkafka(user, mechanism))
        login = self._harness_login() if user is None else None
        if login is not None:
            config = harness_listener_config(*login, config)
        return config

    def _harness_login(self) -> tuple[str, str] | None:
        """The bootstrap servers and password of kafkatest's own listener on a broker
        with ACLs (None without one), where its own clients log in as a super user."""
        return None

    def spark_options(
        self,
        user: str | None = None,
        mechanism: str | None = None,
        *,
        token: DelegationToken | None = None,
    ) -> dict[str, str]:
        """The ``kafka.``-prefixed source and sink options that reach this broker as `user`.

        Pass them to ``.options(**...)`` of a Kafka source or sink exactly as a
        production job carries them (``kafka.security.protocol``,
        ``kafka.sasl.jaas.config``, ``kafka.ssl.truststore.location``, ...). With
        `token` the job logs in with that delegation token (SCRAM, ``tokenauth``),
        as Spark's executors do with the token its driver obtained.
        """
        options = {"kafka.bootstrap.servers": self.bootstrap_servers}
        if token is not None:
            self._token_runtime()
        if self.security_runtime is not None:
            java = self.security_runtime.kafka_clients(user, mechanism, token)
            options.update({f"kafka.{key}": value for key, value in java.items()})
        return options

    def java_client_properties(
        self,
        path: Path,
        user: str | None = None,
        mechanism: str | None = None,
        *,
        token: DelegationToken | None = None,
    ) -> Path:
        """Write a kafka-clients properties file (a tool's ``--command-config``) for
        `user`, or for a client that logs in with `token`."""
        text = f"bootstrap.servers={self.bootstrap_servers}\n"
        if token is not None:
            self._token_runtime()
        if self.security_runtime is not None:
            from kafkatest.security import properties_text

            java = self.security_runtime.kafka_clients(user, mechanism, token)
            text += properties_text(java)
        path.write_text(text)
        path.chmod(0o600)
        return path

    def add_user(self, name: str, password: str, mechanism: str | None = None) -> None:
        """Let `name` log in with `password` (every enabled mechanism unless one is named)."""
        raise UnsupportedOperation(f"{type(self).__name__} cannot add users")

    def create_token(
        self,
        user: str,
        renewers: tuple[str, ...] = (),
        max_lifetime_ms: int = -1,
        mechanism: str | None = None,
    ) -> DelegationToken:
        """A delegation token owned by `user`, asked for as `user` logs in (its
        password; `mechanism` or the broker's first), as ``kafka-delegation-tokens
        --create`` does. `renewers` are "User:<name>" principals that may renew and
        expire it; `max_lifetime_ms` <= 0 is the broker's maximum (7 days).
        Log in with it through `spark_options(token=...)` or
        `java_client_properties(path, token=...)`.
        """
        from kafkatest.brokers.token_client import create_token, wait_for_token_login

        runtime = self._token_runtime()
        tls = runtime.client_tls_context(user)
        token = create_token(
            self.bootstrap_servers,
            tls,
            runtime.security.mechanism_for(mechanism),
            user,
            runtime.security.password_of(user),
            tuple(renewers),
            max_lifetime_ms,
        )
        wait_for_token_login(self.bootstrap_servers, tls, runtime.token_mechanism(), token)
        return token

    def _token_runtime(self) -> BrokerSecurity:
        runtime = self._sasl_runtime()
        runtime.token_mechanism()  # refuses a broker without tokens, saying why
        return runtime

    def _sasl_runtime(self) -> BrokerSecurity:
        runtime = self.security_runtime
        if runtime is None or not runtime.security.sasl:
            protocol = runtime.security.protocol if runtime is not None else "PLAINTEXT"
            raise BrokerError(
                f"users log in over SASL and this broker's listener is {protocol}: start it with "
                'security_protocol="SASL_PLAINTEXT" or "SASL_SSL"'
            )
        return runtime

    def check_caller(self) -> None:
        """Refuse a thread that cannot wait for the broker's answers (the emulator's
        own, where request hooks run); every backend but the emulator takes any."""
        return

    def admin(self) -> AdminClient:
        self.check_caller()
        with self._client_lock:
            if self._admin_client is None:
                self._admin_client = AdminClient(self.client_config())
            return self._admin_client

    def producer(self) -> Producer:
        """One producer per broker, configured as `HELPER_PRODUCER` says."""
        self.check_caller()
        with self._client_lock:
            if self._producer is None:
                self._producer = Producer({**self.client_config(), **HELPER_PRODUCER})
            return self._producer

    def warm_up_producer(self) -> None:
        """Create the harness's producer now, so that its producer-id handshake
        (retried by librdkafka on a 500 ms timer when, as at creation, no
        connection is up yet) is done before the first `produce` needs it."""
        self.producer().poll(0)

    def close_clients(self) -> None:
        """Drop cached clients (before a broker goes away for good)."""
        with self._client_lock:
            if self._producer is not None:
                self._producer.flush(5)
            self._producer = None
            self._admin_client = None
