"""Authorization as one layer: what each API needs, asked before its handler runs.

`core` holds the decision's plumbing (`authorized_call`, the shapes of a denial);
the other modules register one rule per API family, as KafkaApis.scala checks it,
and `operations` the authorized-operations fields of describe answers.
"""

from kafkatest.emulator.server.authorization import (
    cluster,
    groups,
    operations,
    topics,
    transactions,
)
from kafkatest.emulator.server.authorization.core import authorized_call

__all__ = ["authorized_call", "cluster", "groups", "operations", "topics", "transactions"]
