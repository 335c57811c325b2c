"""Fault injection: one API for every backend (see `kafkatest.faults.api`)."""

from kafkatest.faults.api import Faults, faults_for

__all__ = ["Faults", "faults_for"]
