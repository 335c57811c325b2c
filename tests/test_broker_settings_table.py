"""One table of broker settings (emulator/state/broker_settings.py:SETTINGS): the
emulator's accepted settings, the kafka backend's server.properties defaults and what
DescribeConfigs shows are all made from it, and cannot drift apart."""

from __future__ import annotations

import dataclasses

from kafkatest.brokers.config import EMULATOR_SETTINGS
from kafkatest.brokers.kafka_properties import TEST_SETTINGS
from kafkatest.emulator.state.broker_configs import (
    QUICK_TEST_SETTINGS,
    SET_LIKE_THE_KAFKA_BACKEND,
    kafka_settings,
)
from kafkatest.emulator.state.broker_settings import SETTINGS, BrokerSettings, as_kafka_text


def test_the_emulator_defaults_to_what_the_kafka_backend_runs_with() -> None:
    defaults = BrokerSettings()
    for setting in SETTINGS:
        if setting.field is not None and setting.kafka_backend is not None:
            assert as_kafka_text(getattr(defaults, setting.field)) == setting.kafka_backend


def test_every_field_of_the_emulator_is_in_the_table_once() -> None:
    fields = {f.name for f in dataclasses.fields(BrokerSettings)} - {"topic_defaults"}
    named = [s.field for s in SETTINGS if s.field is not None]
    assert sorted(named) == sorted(fields)
    assert len({s.name for s in SETTINGS}) == len(SETTINGS)


def test_the_derived_tables() -> None:
    assert set(TEST_SETTINGS) == {s.name for s in SETTINGS if s.kafka_backend is not None}
    assert "offsets.topic.num.partitions" not in EMULATOR_SETTINGS  # not settable there
    assert EMULATOR_SETTINGS["num.partitions"][0] == "num_partitions"
    assert not set(QUICK_TEST_SETTINGS) & set(EMULATOR_SETTINGS)
    assert set(TEST_SETTINGS) >= SET_LIKE_THE_KAFKA_BACKEND
    shown = kafka_settings(BrokerSettings())
    assert shown["auto.create.topics.enable"] == "true" and shown["num.partitions"] == "1"
