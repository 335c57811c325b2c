"""One interface for every broker a test can run against.

Tests, seeding, sink readers and fault injection only ever see a `Broker`, so the
same test runs on the emulator, on real Apache Kafka, in a container or on an
existing cluster. Everything a client can do over the wire is done by the clients a
broker holds (`TopicClient`, `RecordClient`, `AclClient`), whose methods it offers as
its own (``broker.create_topic``, ``broker.produce``, ``broker.allow``); how clients
reach it is `ClientConnections`; a backend only says how it is started, stopped and
reached, and what it can do (`capabilities`).
"""

from __future__ import annotations

import functools
from abc import abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from kafkatest._ground.held import held
from kafkatest.brokers.acl_client import AclClient
from kafkatest.brokers.capabilities import Capability
from kafkatest.brokers.client import RecordClient
from kafkatest.brokers.client_connections import ClientConnections
from kafkatest.brokers.topic_client import TopicClient, parse_topic_config
from kafkatest.errors import UnsupportedOperation

if TYPE_CHECKING:
    from kafkatest.brokers.broker_clock import BrokerClock

__all__ = ["Broker", "Capability", "parse_topic_config"]

REQUEST_LOG_REFUSAL = (
    "the {backend!r} backend answers requests in its own process, where kafkatest "
    "cannot see them: assert on what the job produced, or run the test on the "
    "emulator only with @pytest.mark.kafka_backends('emulator')"
)

REQUEST_HOOK_REFUSAL = (
    "the {backend!r} backend answers requests in its own process, where kafkatest "
    "cannot hook them: use kafka_faults (what every backend can do), or run the test "
    "on the emulator only with @pytest.mark.kafka_backends('emulator')"
)

RTT_REFUSAL = (
    "the {backend!r} backend answers requests in its own process, where kafkatest "
    "cannot delay them: use kafka_faults.add_latency (or a network delay outside the "
    "test), or run the test on the emulator only with @pytest.mark.kafka_backends('emulator')"
)

#: Broker settings as Kafka's property names (``config=`` of `make_broker`), if any.
Settings = Mapping[str, object] | None
#: The other keywords of `make_broker`, which a backend's constructor takes.
Options = dict[str, object]


class Broker(ClientConnections):
    """A running Kafka-compatible broker (or cluster) and what a test may do with it."""

    #: Backend name as given to ``--kafka-backend``.
    backend: str = "abstract"
    #: What this backend can do (`Capability`), declared once here, on its class:
    #: faults, fixtures and checks ask this instead of comparing `backend`.
    capabilities: ClassVar[frozenset[Capability]] = frozenset()

    def can(self, capability: Capability) -> bool:
        """Whether this broker's backend can do `capability`."""
        return capability in self.capabilities

    @property
    def clock(self) -> BrokerClock:
        """The broker's clock (`freeze`, `advance`, `now_ms`): the emulator's only; other
        backends refuse it with UnsupportedOperation saying what to do instead."""
        from kafkatest.brokers.broker_clock import clock_of

        return clock_of(self)

    def let_time_pass(self, seconds: float) -> None:
        """Let `seconds` of the broker's time pass: its clock is advanced where kafkatest
        holds it (the emulator: what fell due runs before this returns), else this
        waits them out. For a test of timeouts on every backend, e.g. a transaction
        timeout short on Kafka and long, never reached by real time, on the emulator."""
        if self.can(Capability.CLOCK):
            self.clock.advance(seconds=seconds)
        else:
            import time

            time.sleep(seconds)

    def on_request(
        self,
        api: str | int,
        fn: Callable[[Any], Any],
        *,
        topic: str | None = None,
        client_id: str | None = None,
        times: int | None = None,
    ) -> Any:
        """Have `fn(request)` answer, delay, drop or hold matching requests. Emulator only."""
        raise UnsupportedOperation(REQUEST_HOOK_REFUSAL.format(backend=self.backend))

    def release_held(self) -> None:
        """Let the requests a hook answered HOLD go on. Emulator only."""
        raise UnsupportedOperation(REQUEST_HOOK_REFUSAL.format(backend=self.backend))

    @property
    def rtt_ms(self) -> float:
        """The round-trip time every answer takes (``kafka_broker.rtt_ms = 50``, or
        `set_rtt` for one node of a cluster); reset after each test. Emulator only."""
        raise UnsupportedOperation(RTT_REFUSAL.format(backend=self.backend))

    @rtt_ms.setter
    def rtt_ms(self, ms: float) -> None:
        self.set_rtt(ms)

    def set_rtt(self, ms: float, *, broker_id: int | None = None) -> None:
        """Delay every answer of the broker (or of node `broker_id`) by `ms`. Emulator only."""
        raise UnsupportedOperation(RTT_REFUSAL.format(backend=self.backend))

    def record_requests(self, limit: int = 10_000) -> None:
        """Log every request from now on (the latest `limit`): see `requests`."""
        raise UnsupportedOperation(REQUEST_LOG_REFUSAL.format(backend=self.backend))

    def stop_recording_requests(self) -> None:
        """Turn the request log off (a session broker outlives the test that logged)."""
        raise UnsupportedOperation(REQUEST_LOG_REFUSAL.format(backend=self.backend))

    def requests(self, api: str | None = None, client_id: str | None = None) -> list[Any]:
        """The logged requests, oldest first, of one API ("Fetch") and/or client id:
        each with `api`, `version`, `client_id`, `request` (decoded fields),
        `error_codes`, `time_ms`, `connection` and `client_software`. Emulator only."""
        raise UnsupportedOperation(REQUEST_LOG_REFUSAL.format(backend=self.backend))

    def expect_requests(self, versions: Iterable[tuple[int, int]]) -> None:
        """Clients are about to send these (API key, version) pairs: a broker that
        decodes them in this process (the emulator) gets ready for them while it idles.
        A hint only: nothing a client sees changes, and other backends ignore it."""

    @classmethod
    def from_options(cls, config: Settings, bootstrap: str | None, options: Options) -> Broker:
        """A not-yet-started broker from `make_broker`'s arguments: `config` holds Kafka
        property names (turned into what this backend takes), `options` the rest."""
        if config:
            raise UnsupportedOperation(f"the {cls.backend!r} backend takes no broker config")
        return cls(**options)  # type: ignore[arg-type]

    # -- the clients it holds ------------------------------------------------------------

    @functools.cached_property
    def topic_client(self) -> TopicClient:
        """Topics and their configs; its methods are the broker's too."""
        return TopicClient(self)

    @functools.cached_property
    def record_client(self) -> RecordClient:
        """Offsets, produce and consume; its methods are the broker's too."""
        return RecordClient(self, self.topic_client)

    @functools.cached_property
    def acl_client(self) -> AclClient:
        """ACLs (a broker started with ``acls=True``); its methods are the broker's too."""
        return AclClient(self)

    list_topics = held("topic_client", TopicClient.list_topics)
    partition_count = held("topic_client", TopicClient.partition_count)
    topic_exists = held("topic_client", TopicClient.topic_exists)
    create_topic = held("topic_client", TopicClient.create_topic)
    delete_topic = held("topic_client", TopicClient.delete_topic)
    add_partitions = held("topic_client", TopicClient.add_partitions)
    alter_topic_config = held("topic_client", TopicClient.alter_topic_config)
    topic_config_overrides = held("topic_client", TopicClient.topic_config_overrides)
    reset_topic_config = held("topic_client", TopicClient.reset_topic_config)
    topic_config = held("topic_client", TopicClient.topic_config)
    earliest_offsets = held("record_client", RecordClient.earliest_offsets)
    latest_offsets = held("record_client", RecordClient.latest_offsets)
    delete_records = held("record_client", RecordClient.delete_records)
    produce = held("record_client", RecordClient.produce)
    consume = held("record_client", RecordClient.consume)
    allow = held("acl_client", AclClient.allow)
    deny = held("acl_client", AclClient.deny)
    acls = held("acl_client", AclClient.acls)
    remove_acls = held("acl_client", AclClient.remove_acls)

    # -- its life --------------------------------------------------------------------------

    @abstractmethod
    def start(self) -> None:
        """Start the broker and return once it answers Metadata."""

    def stop(self) -> None:
        """Stop the broker, keeping its data so that `start` brings it back."""
        raise UnsupportedOperation(f"the {self.backend!r} backend cannot be stopped by kafkatest")

    def restart(self) -> None:
        """Stop and start again with data kept (clients see a broker outage)."""
        self.stop()
        self.start()

    @abstractmethod
    def close(self) -> None:
        """Release everything (process, ports, temp dirs). Safe to call twice."""

    def diagnostics(self, topics: Sequence[str] = ()) -> str:
        """Text worth showing when a test fails (e.g. the tail of the broker log), with
        what the broker did to `topics`, the failed test's own."""
        return ""

    def __enter__(self) -> Broker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.backend} {self._describe_address()}>"

    def _describe_address(self) -> str:
        try:
            return self.bootstrap_servers
        except Exception:
            return "(not started)"
