"""The one error a fault that cannot fire is refused with, on every surface."""

from __future__ import annotations

from kafkatest.errors import BrokerError


class InvalidFault(BrokerError):
    """A fault that cannot fire, or that names something that does not exist."""
