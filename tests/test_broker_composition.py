"""A broker holds its clients instead of inheriting them: every public method of
TopicClient, RecordClient and AclClient is still a method of Broker, with its
signature and docstring, and none of them is a base class. The emulator's state holds
its writer and log maintenance, and `Faults` its parts, the same way."""

from __future__ import annotations

import inspect

import pytest

from kafkatest.brokers.acl_client import AclClient
from kafkatest.brokers.base import Broker
from kafkatest.brokers.client import ClientOperations, RecordClient
from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.brokers.topic_client import TopicClient

CLIENTS = (TopicClient, RecordClient, AclClient)


def assert_offers(owner: type, part: type) -> None:
    """`owner` holds `part` (not a base class) and offers each of its public methods as
    its own, with the same signature and docstring."""
    assert part not in owner.__mro__
    for name, method in vars(part).items():
        if name.startswith("_") or not callable(method):
            continue
        offered = getattr(owner, name)
        assert inspect.signature(offered) == inspect.signature(method), name
        assert offered.__doc__ == method.__doc__, name


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.__name__)
def test_every_public_method_of_a_held_client_is_the_brokers(client: type) -> None:
    assert_offers(Broker, client)


def test_a_broker_is_what_seeding_and_sinks_ask_for() -> None:
    broker = EmulatorBroker()
    try:
        assert isinstance(broker, ClientOperations)
        assert broker.topic_client is broker.topic_client  # one client per broker
        assert broker.record_client._topics is broker.topic_client
    finally:
        broker.close()
    assert not isinstance(object(), ClientOperations)


def test_the_emulator_state_holds_its_writer_and_log_maintenance() -> None:
    from kafkatest.emulator import EmulatorState
    from kafkatest.emulator.state.log_maintenance import LogMaintenance
    from kafkatest.emulator.state.partition_writes import PartitionWrites

    for held in (PartitionWrites, LogMaintenance):
        assert_offers(EmulatorState, held)
    state = EmulatorState()
    assert state.maintenance.writes is state.writes and state.writes.clock is state.clock


def test_faults_hold_their_parts_and_offer_each_public_method_as_their_own() -> None:
    """`Faults` holds its topic, emulator and checkpoint faults as a broker holds its
    clients (no part is a base class), and every fault is still a `Faults` method, with
    its signature and docstring, and run by name from the registry."""
    from kafkatest.faults.api import Faults
    from kafkatest.faults.checkpoint_faults import CheckpointFaults
    from kafkatest.faults.emulator_faults import EmulatorFaults
    from kafkatest.faults.registry import all_faults
    from kafkatest.faults.topics import TopicFaults

    for part in (TopicFaults, EmulatorFaults, CheckpointFaults):
        assert_offers(Faults, part)
    assert all(callable(getattr(Faults, name)) for name in all_faults())
    broker = EmulatorBroker()
    try:
        faults = Faults(broker)
        assert faults.topic_faults.broker is faults.emulator_faults.broker is broker
        assert faults.topic_faults._moved is faults._moved  # one record of leader moves
    finally:
        broker.close()
