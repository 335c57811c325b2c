"""Users of a `kafka` backend node's SASL listener, added while it runs.

SCRAM users are added as Kafka adds them at run time (AlterUserScramCredentials,
what ``kafka-configs --add-config`` sends); PLAIN users live in the listener's JAAS
configuration, which Kafka reads at start-up only, so adding one restarts the node
(data kept), as an operator would have to.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from confluent_kafka.admin import AdminClient

from kafkatest.errors import BrokerError

if TYPE_CHECKING:
    from kafkatest.brokers.kafka_process import KafkaProcessBroker


def add_user(broker: KafkaProcessBroker, name: str, password: str, mechanism: str | None) -> None:
    """Let `name` log in with `password`: over `mechanism`, or every enabled one;
    returns once the broker accepts the login."""
    runtime = broker._sasl_runtime()
    mechanisms = runtime.add_user(name, password, mechanism)
    scram = [m for m in mechanisms if m != "PLAIN"]
    if scram:
        from confluent_kafka.admin import (
            ScramCredentialInfo,
            ScramMechanism,
            UserScramCredentialAlteration,
            UserScramCredentialUpsertion,
        )

        upserts: list[UserScramCredentialAlteration] = [
            UserScramCredentialUpsertion(
                name,
                ScramCredentialInfo(getattr(ScramMechanism, m.replace("-", "_")), 4096),
                password.encode(),
            )
            for m in scram
        ]
        for future in broker.admin().alter_user_scram_credentials(upserts).values():
            future.result(30)
        for m in scram:
            wait_for_login(broker, name, m)
    if "PLAIN" in mechanisms and broker._workdir is not None:
        broker.close_clients()
        broker.stop()
        broker._write_config()
        broker.start()


def wait_for_login(
    broker: KafkaProcessBroker, user: str, mechanism: str, timeout_s: float = 30.0
) -> None:
    """The controller accepts a credential before the broker's cache has it."""
    deadline = time.monotonic() + timeout_s
    while True:
        admin = AdminClient(broker.client_config(user, mechanism))
        try:
            admin.list_topics(timeout=2.0)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise BrokerError(
                    f"user {user!r} could not log in with {mechanism} {timeout_s:.0f}s after "
                    f"its credential was added.\n{broker.diagnostics()}"
                ) from None
            time.sleep(0.2)
