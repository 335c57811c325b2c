"""Fault injection: one API for every backend (see `kafkatest.faults.api`)."""

import kafkatest.kio_codec  # noqa: F401 - before any kio type is defined
from kafkatest.faults.api import Faults, faults_for

__all__ = ["Faults", "faults_for"]
