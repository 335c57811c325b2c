"""What a backend can do, declared once on its `Broker` class.

Code that needs something only some backends can do (stop the broker, pause it,
move its clock, hook its requests, run a cluster) asks ``broker.can(...)`` or
looks the capability up in `Broker.capabilities`, instead of comparing the
backend's name: a new backend then says what it can do in one place, and every
fault, fixture and check follows. The fault registry derives "which backends
support this fault" from these declarations (`kafkatest.faults.registry`).

This module imports nothing, so the registry and the plugin can name a
capability without importing a backend.
"""

from __future__ import annotations

import enum


class Capability(str, enum.Enum):
    """One thing a backend may be able to do; the value is its name in messages."""

    #: kafkatest runs the broker, so it can stop it and start it again, data kept.
    STOP = "stop"
    #: Stop and start again with data kept (a broker outage clients see).
    RESTART = "restart"
    #: Freeze the broker with its connections open (the emulator's gate, SIGSTOP).
    PAUSE = "pause"
    #: Run several brokers, stop one of them, move partition leaders.
    CLUSTERS = "clusters"
    #: Start with an authorizer and ACLs kafkatest manages.
    ACLS = "acls"
    #: kafkatest opens the listeners: TLS/SASL security and an advertised host.
    LISTENERS = "listeners"
    #: Move the broker's clock (retention, timeouts) without waiting.
    CLOCK = "clock"
    #: Delay, fail or drop single requests inside the broker, lose an acknowledgement.
    REQUEST_HOOKS = "request hooks"
    #: The broker's state can be read in process (no request, works while paused).
    STATE = "in-process state"
    #: kafkatest sees the broker's log directory, hence when its cleaner has run.
    LOG_DIRECTORY = "log directory"
    #: The broker runs a known Apache Kafka release (``kafka_min_version`` applies).
    KAFKA_VERSION = "Apache Kafka version"
    #: One broker may serve every pytest-xdist worker of a run.
    SHARED_BY_WORKERS = "shared by xdist workers"


#: What a broker kafkatest starts and owns can do, whichever process it is.
RUN_BY_KAFKATEST = frozenset({Capability.STOP, Capability.RESTART})
#: What a broker kafkatest starts on this machine can do beside: pause it, run several,
#: authorize with ACLs, open its listeners and see its log directory (the emulator and
#: a Kafka JVM alike; a container shares none of these).
RUN_HERE = RUN_BY_KAFKATEST | {
    Capability.PAUSE,
    Capability.CLUSTERS,
    Capability.ACLS,
    Capability.LISTENERS,
    Capability.LOG_DIRECTORY,
}
