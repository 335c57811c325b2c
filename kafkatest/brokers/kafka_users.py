"""SCRAM users of a `kafka` backend node, added while it runs, as Kafka adds them
(AlterUserScramCredentials, what ``kafka-configs --add-config`` sends). PLAIN users
live in the listener's JAAS configuration, which Kafka reads at start-up only: the
node restarts to add one (`KafkaProcessBroker.add_user`), as an operator would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from confluent_kafka.admin import AdminClient

from kafkatest.brokers.client_waits import retry
from kafkatest.errors import BrokerError

if TYPE_CHECKING:
    from kafkatest.brokers.base import Broker


def add_scram_credentials(
    broker: Broker, name: str, password: str, mechanisms: tuple[str, ...]
) -> None:
    """`name`'s credential for each SCRAM mechanism of `mechanisms` (PLAIN is the
    caller's: a restart); returns once the broker accepts the login."""
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


def wait_for_login(broker: Broker, user: str, mechanism: str, timeout_s: float = 30.0) -> None:
    """The controller accepts a credential before the broker's cache has it."""
    retry(
        lambda: AdminClient(broker.client_config(user, mechanism)).list_topics(timeout=2.0),
        (Exception,),
        timeout_s,
        0.2,
        lambda _: BrokerError(
            f"user {user!r} could not log in with {mechanism} {timeout_s:.0f}s after "
            f"its credential was added.\n{broker.diagnostics()}"
        ),
    )
