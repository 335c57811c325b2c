"""pytest fixtures for Kafka + PySpark tests (registered through the pytest11 entry point).

A thin layer: every fixture wraps a plain library call, so the same things work in
scripts and other test runners. One broker and one SparkSession serve the whole
session (both are slow to start); tests are isolated by unique topic names and a
fresh checkpoint directory each.

This module is what pytest loads; the hooks and fixtures live in `kafkatest.plugin`,
one module per concern: `options` (command line, ini, checks at start), `brokers`
(the broker, topics, faults, the schema registry), `spark` (the session and
checkpoints) and `reports` (what a failing test's report carries).
"""

# pytest finds the hooks and fixtures below by their names in this module:
# ruff: noqa: F401

from __future__ import annotations

from kafkatest.plugin.brokers import (
    BrokerRequest,
    _kafkatest_backend_filter,
    _kafkatest_broker_clock_undone,
    kafka_backend,
    kafka_bootstrap,
    kafka_broker,
    kafka_faults,
    kafka_topic,
    pytest_collection_finish,
    pytest_generate_tests,
    pytest_sessionfinish,
    schema_registry,
    unique_topic_name,
)
from kafkatest.plugin.options import (
    MAX_EMULATOR_BROKERS,
    pytest_addoption,
    pytest_configure,
    pytest_report_header,
    security_options,
    selected_backends,
    spark_master,
    spark_remote,
    xdist_worker,
)
from kafkatest.plugin.reports import pytest_runtest_makereport
from kafkatest.plugin.request_report import pytest_runtest_call, pytest_runtest_teardown
from kafkatest.plugin.spark import (
    checkpoint_dir,
    local_spark_session,
    pytest_runtest_setup,
    spark,
    spark_clock,
    spark_session,
)
