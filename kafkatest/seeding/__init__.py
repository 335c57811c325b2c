"""Seed topics with keyed, headered, traceable records (see `seed`)."""

from kafkatest.seeding.fake import fake_values
from kafkatest.seeding.files import load_fixture
from kafkatest.seeding.items import DEFAULT_ID_HEADER
from kafkatest.seeding.result import Origin, SeedResult
from kafkatest.seeding.seed import SeedAutoCreateWarning, seed

__all__ = [
    "DEFAULT_ID_HEADER",
    "Origin",
    "SeedAutoCreateWarning",
    "SeedResult",
    "fake_values",
    "load_fixture",
    "seed",
]
