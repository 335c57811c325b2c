"""A broker holds its clients instead of inheriting them: every public method of
TopicClient, RecordClient and AclClient is still a method of Broker, with its
signature and docstring, and none of them is a base class."""

from __future__ import annotations

import inspect

import pytest

from kafkatest.brokers.acl_client import AclClient
from kafkatest.brokers.base import Broker
from kafkatest.brokers.client import ClientOperations, RecordClient
from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.brokers.topic_client import TopicClient

CLIENTS = (TopicClient, RecordClient, AclClient)


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.__name__)
def test_every_public_method_of_a_held_client_is_the_brokers(client: type) -> None:
    assert client not in Broker.__mro__
    for name, method in vars(client).items():
        if name.startswith("_") or not callable(method):
            continue
        offered = getattr(Broker, name)
        assert inspect.signature(offered) == inspect.signature(method), name
        assert offered.__doc__ == method.__doc__, name


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
        assert held not in EmulatorState.__mro__
        for name, method in vars(held).items():
            if callable(method) and not name.startswith("_"):
                assert inspect.signature(getattr(EmulatorState, name)) == inspect.signature(method)
    state = EmulatorState()
    assert state.maintenance.writes is state.writes and state.writes.clock is state.clock
