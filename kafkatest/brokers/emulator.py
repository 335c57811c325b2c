"""The in-process emulator as a `Broker`: starts in milliseconds, no JVM.

`state` is exposed for fault injection and for tests that need to move the
broker's clock or enforce retention; change it through `call` so the change runs
on the broker's own thread.
"""

from __future__ import annotations

import secrets
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import ClassVar, TypeVar

from kafkatest._ground.exposure import ExposedEmulatorWarning, exposure_warning
from kafkatest._ground.held import held
from kafkatest.brokers.acl_client import ADMIN_LOGIN, ADMIN_PRINCIPAL
from kafkatest.brokers.base import Broker, Options, Settings
from kafkatest.brokers.capabilities import RUN_HERE, Capability
from kafkatest.brokers.config import emulator_settings
from kafkatest.brokers.security import BrokerSecurity, tls_hosts
from kafkatest.emulator import (
    OWN_THREAD,
    Authorizer,
    BrokerSettings,
    Emulator,
    EmulatorState,
    FaultHook,
    HarnessListener,
    RequestEntry,
    RequestLog,
)
from kafkatest.errors import BrokerError
from kafkatest.security import Security

T = TypeVar("T")


class EmulatorBroker(Broker):
    backend = "emulator"
    #: Everything: the broker runs in this process, so kafkatest holds its state,
    #: its clock and a hook on every request.
    capabilities: ClassVar[frozenset[Capability]] = RUN_HERE | {
        Capability.CLOCK,
        Capability.REQUEST_HOOKS,
        Capability.STATE,
    }

    @classmethod
    def from_options(cls, config: Settings, bootstrap: str | None, options: Options) -> Broker:
        if config is not None:
            options["settings"] = emulator_settings(config)
        return cls(**options)  # type: ignore[arg-type]

    def __init__(
        self,
        brokers: int = 1,
        host: str = "127.0.0.1",
        port: int = 0,
        settings: BrokerSettings | None = None,
        security: Security | None = None,
        acls: bool = False,
        super_users: Iterable[str] = (),
    ) -> None:
        warning = exposure_warning(host)
        if warning is not None:
            warnings.warn(warning, ExposedEmulatorWarning, stacklevel=2)
        listener = None
        if security is not None and security.secured:
            self.security_runtime = BrokerSecurity(security, tls_hosts(host))
            listener = self.security_runtime.listener_security()
        #: With ACLs, kafkatest's own listener: its clients log in there as
        #: ADMIN_PRINCIPAL, a super user, with a password made up for this broker.
        self._harness: HarnessListener | None = None
        if acls:
            self._harness = HarnessListener(ADMIN_LOGIN, secrets.token_urlsafe(24))
        #: The emulator itself (`kafkatest.emulator.Emulator`): its state, listeners,
        #: request hooks and request log.
        self.emulator = Emulator(
            brokers, host, port, settings, security=listener, harness=self._harness
        )
        if security is not None and security.sasl:
            for user, password in security.users.items():
                self.state.credentials.add_user(user, password, security.mechanisms)
        if self.security_runtime is not None and self.security_runtime.token_secret:
            self.state.delegation_tokens.enable(self.security_runtime.token_secret)
        if acls:
            self.state.acls = Authorizer(super_users={ADMIN_PRINCIPAL, *super_users})

    def _harness_login(self) -> tuple[str, str] | None:
        if self._harness is None:
            return None
        return self.emulator.server.harness_bootstrap_servers, self._harness.password

    def add_user(self, name: str, password: str, mechanism: str | None = None) -> None:
        """Let `name` log in with `password`: over `mechanism`, or every enabled one.

        As Kafka keeps them: PLAIN in the listener's user list, SCRAM as a
        credential (what ``kafka-configs --add-config SCRAM-SHA-512=[...]`` makes).
        """
        runtime = self._sasl_runtime()
        mechanisms = runtime.add_user(name, password, mechanism)
        self.call(lambda: self.state.credentials.add_user(name, password, mechanisms))

    @property
    def state(self) -> EmulatorState:
        return self.emulator.state

    @property
    def faults(self) -> FaultHook:
        return self.emulator.server.faults

    @faults.setter
    def faults(self, hook: FaultHook) -> None:
        self.emulator.server.faults = hook

    def expect_requests(self, versions: Iterable[tuple[int, int]]) -> None:
        """Load these (API key, version) pairs' schemas while the emulator idles, so that
        the first such request is not answered only after its schema has loaded."""
        self.emulator.load_schemas_when_idle(versions)

    record_timings = held("emulator", Emulator.record_timings)
    on_request = held("emulator", Emulator.on_request)

    def release_held(self) -> None:
        """Let every request a hook answered HOLD go on."""
        self.emulator.hooks.release_held()

    @property
    def rtt_ms(self) -> float:
        """The round-trip time every answer takes, in ms (0: none); set it to delay
        every answer of every node. The plugin resets it after each test."""
        rtt_ms = getattr(self.faults, "rtt_ms", None)  # no hooks yet: none
        return float(rtt_ms()) if rtt_ms is not None else 0.0

    @rtt_ms.setter
    def rtt_ms(self, ms: float) -> None:
        self.set_rtt(ms)

    def set_rtt(self, ms: float, *, broker_id: int | None = None) -> None:
        """Delay every answer (of node `broker_id` only, in a cluster) by `ms`: the
        handler runs after it, so no answer leaves sooner; 0 removes it."""
        if broker_id is not None and broker_id not in self.broker_ids:
            raise BrokerError(f"no emulated broker {broker_id}: the nodes are {self.broker_ids}")
        self.emulator.hooks.set_rtt(ms, broker_id)

    def record_requests(self, limit: int = 10_000) -> None:
        """Start (or restart, empty) the request log: the latest `limit` requests."""
        self.emulator.server.request_log = RequestLog(limit)

    def stop_recording_requests(self) -> None:
        """Turn the request log off (and forget it): the request path is as without it."""
        self.emulator.server.request_log = None

    @property
    def request_log(self) -> RequestLog | None:
        """The request log while it is on (a failed test's report summarises it)."""
        return self.emulator.server.request_log

    def requests(self, api: str | None = None, client_id: str | None = None) -> list[RequestEntry]:
        log = self.emulator.server.request_log
        if log is None:
            raise BrokerError(
                "the request log is off: call kafka_broker.record_requests() before the "
                "requests you want to see"
            )
        return self.call(lambda: log.entries(api, client_id))

    @property
    def bootstrap_servers(self) -> str:
        if not self.emulator.running:
            raise BrokerError("the emulator is not running: call start() first")
        return self.emulator.bootstrap_servers

    @property
    def running(self) -> bool:
        return self.emulator.running

    def start(self) -> None:
        try:
            self.emulator.start()
        except OSError as exc:
            raise BrokerError(f"the emulator could not listen: {exc}") from exc

    def stop(self) -> None:
        """Close listeners and connections; topics and data are kept for `start`.

        As on a one-node Kafka, every partition comes back two leader epochs later
        (leaderless at shutdown, led again at start-up).
        """
        if self.emulator.running:
            self.emulator.stop()
            self.call(self.state.reelect_leaders)

    @property
    def broker_ids(self) -> list[int]:
        return list(self.state.cluster.broker_ids)

    def stop_node(self, broker_id: int) -> None:
        """Stop one emulated broker (as `KafkaClusterBroker.stop_node` stops one JVM)."""
        self.emulator.stop_broker(broker_id)

    def start_node(self, broker_id: int) -> None:
        self.emulator.start_broker(broker_id)

    def close(self) -> None:
        if self.emulator.running:
            self.close_clients()
        self.emulator.close()
        if self.security_runtime is not None:
            self.security_runtime.close()

    def check_caller(self) -> None:
        """Refuse a Kafka client on the emulator's own thread (in a request hook): it
        would wait for answers from the loop that is running the hook."""
        if self.emulator.on_loop_thread():
            raise RuntimeError(f"kafkatest's Kafka clients cannot be used here: {OWN_THREAD}")

    def call(self, function: Callable[[], T]) -> T:
        """Run `function` on the emulator's thread (the safe way to touch `state`)."""
        return self.emulator.call(function)

    def advance_clock(self, ms: int) -> None:
        """Move the broker's clock forward and run what fell due (retention, the
        cleaner, transaction aborts, group sessions): see `clock` for the test's API."""
        self.emulator.pass_time(ms)

    def enforce_retention(self) -> None:
        """Apply retention.ms / retention.bytes now, as Kafka's periodic check would."""
        self.call(self.state.enforce_retention)

    def compact_now(self, topic: str, roll: bool = True) -> dict[int, int]:
        """Roll each partition with a marker record (unless not `roll`) and run the log
        cleaner now (see `Faults.compact_now`); the offset it reached per partition."""
        return self.call(lambda: self.state.compact_now(topic, roll))

    def diagnostics(self, topics: Sequence[str] = ()) -> str:
        if not self.emulator.running:
            return "emulator stopped"
        if not topics:
            listed = self.call(lambda: [(t.name, len(t.partitions)) for t in self.state.topics])
            return f"emulator at {self.emulator.bootstrap_servers}; topics: {listed}"
        wanted = set(topics)

        def offsets() -> list[str]:
            return [
                f"{t.name}-{p.index}: log start {p.log.log_start_offset}, "
                f"high watermark {p.log.high_watermark}, log end {p.log.log_end_offset}"
                for t in self.state.topics
                if t.name in wanted
                for p in t.partitions
            ]

        lines = "\n".join(self.call(offsets)) or "(none of them exists now)"
        return f"emulator at {self.emulator.bootstrap_servers}; this test's topics:\n{lines}"
