"""Errors kafkatest raises itself; each says what went wrong and what to do."""

from __future__ import annotations


class KafkaTestError(Exception):
    """Base of every error kafkatest raises on purpose."""


class SetupError(KafkaTestError):
    """The machine lacks something kafkatest needs (Java, Maven, Docker, a jar)."""


class BrokerError(KafkaTestError):
    """A broker could not be started, reached or asked to do something."""


class UnsupportedOperation(BrokerError):
    """The chosen backend cannot do this (e.g. restart an external cluster)."""
