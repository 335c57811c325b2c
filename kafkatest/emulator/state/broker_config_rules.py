"""Which broker configs may change while the broker runs, at which level, and the
checks Kafka 4.1 makes on a change, with its words.

Kafka checks a change of broker configs (IncrementalAlterConfigs or AlterConfigs
of a BROKER resource) on the broker that receives it, in this order: every key is
dynamic (`read_only` false in Kafka's DescribeConfigs of a broker), security
configs carry a listener prefix, every value parses as its type and passes its
bounds, and a per-broker config is not set cluster-wide; then its broker config's
own requirements (`log.roll.ms` at least 1, ...) and the components that would take
the change (thread pools may at most halve or double). A key Kafka does not know is
kept as a custom config, unchecked.

The emulator keeps what it cannot apply out: its listeners, their security and
anything naming a Java class are refused after Kafka's own checks, with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache

from kafkatest.emulator.state.broker_configs import kafka_default, kafka_defaults
from kafkatest.emulator.state.errors import InvalidConfig, InvalidRequest
from kafkatest.emulator.state.internal_topics import java_string_hash
from kafkatest.emulator.state.topic_configs import BROKER_SYNONYMS, TOPIC_CONFIGS, java_double

#: DescribeConfigs' config type codes in Kafka's broker table.
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = range(1, 10)
_TYPE_NAMES = {INT: "INT", SHORT: "SHORT", LONG: "LONG", DOUBLE: "DOUBLE"}

#: SslConfigs.RECONFIGURABLE_CONFIGS: changed only per listener (listener.name.X.*).
LISTENER_ONLY_SECURITY = frozenset(
    {
        "ssl.keystore.type",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.key.password",
        "ssl.truststore.type",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.keystore.certificate.chain",
        "ssl.keystore.key",
        "ssl.truststore.certificates",
    }
)
#: Listener configs that are not cluster-wide (DynamicListenerConfig's, less the
#: connection limits and network threads, which are): set per broker only.
_CLUSTER_LEVEL_LISTENER = frozenset(
    {"max.connections", "max.connection.creation.rate", "num.network.threads"}
)
_PER_BROKER_ONLY = frozenset(
    {
        "advertised.listeners",
        "listeners",
        "listener.security.protocol.map",
        "principal.builder.class",
        "ssl.protocol",
        "ssl.provider",
        "ssl.cipher.suites",
        "ssl.enabled.protocols",
        "ssl.keymanager.algorithm",
        "ssl.trustmanager.algorithm",
        "ssl.endpoint.identification.algorithm",
        "ssl.secure.random.implementation",
        "ssl.client.auth",
        "ssl.engine.factory.class",
        "sasl.mechanism.inter.broker.protocol",
        "sasl.jaas.config",
        "sasl.enabled.mechanisms",
        "sasl.kerberos.service.name",
        "sasl.kerberos.kinit.cmd",
        "sasl.kerberos.ticket.renew.window.factor",
        "sasl.kerberos.ticket.renew.jitter",
        "sasl.kerberos.min.time.before.relogin",
        "sasl.kerberos.principal.to.local.rules",
        "sasl.login.refresh.window.factor",
        "sasl.login.refresh.window.jitter",
        "sasl.login.refresh.min.period.seconds",
        "sasl.login.refresh.buffer.seconds",
        *LISTENER_ONLY_SECURITY,
    }
)
_LISTENER_PREFIX = "listener.name."

#: Thread pools a change may at most halve or double (Kafka's DynamicThreadPool and
#: the network threads' acceptor); the log cleaner's has its own words.
THREAD_POOLS = frozenset(
    {
        "num.io.threads",
        "num.network.threads",
        "num.replica.fetchers",
        "num.recovery.threads.per.data.dir",
        "background.threads",
    }
)
CLEANER_THREADS = "log.cleaner.threads"

#: Bounds Kafka declares on dynamic broker configs (beside their topic twin's): None
#: where the broker config has none though its twin has.
_AT_LEAST: dict[str, int | None] = {
    **dict.fromkeys(THREAD_POOLS, 1),
    "log.retention.ms": None,
    "log.flush.interval.ms": None,
    "log.roll.ms": None,
    "log.roll.jitter.ms": None,
    "log.cleaner.io.buffer.size": 0,
    "remote.log.reader.threads": 1,
    CLEANER_THREADS: 0,
    "producer.id.expiration.ms": 1,
    "message.max.bytes": 0,
    "min.insync.replicas": 1,
    "log.cleaner.backoff.ms": 0,
    "max.connections": 0,
    "max.connections.per.ip": 0,
    "max.connection.creation.rate": 0,
}
#: The broker's wording of a list's allowed values, where it differs from the topic's.
_BROKER_CHOICES: dict[str, tuple[str, ...]] = {"log.cleanup.policy": ("compact", "delete")}


@cache
def _broker_table() -> dict[str, tuple[int, bool]]:
    """Kafka's broker configs: name -> (type code, dynamic)."""
    return {entry.name: (entry.type, not entry.read_only) for entry in kafka_defaults()}


@cache
def _topic_twins() -> dict[str, str]:
    """Broker config -> the topic config whose default it sets."""
    return {broker: topic for topic, broker in BROKER_SYNONYMS.items()}


def is_kafka_config(name: str) -> bool:
    return name in _broker_table()


def is_list(name: str) -> bool:
    return _broker_table().get(name, (STRING, False))[0] == LIST


def is_dynamic(name: str) -> bool:
    return _broker_table().get(name, (STRING, False))[1]


def is_listener_config(name: str) -> bool:
    return name.startswith(_LISTENER_PREFIX) and name.count(".") >= 3


def listener_base(name: str) -> str:
    """`listener.name.plaintext.ssl.keystore.location` -> `ssl.keystore.location`."""
    return name.split(".", 3)[3] if is_listener_config(name) else name


def java_set(names: Iterable[str]) -> str:
    """How Kafka prints the set of keys it refuses: a java.util.HashSet, `[a, b]`, in
    the order its table holds them (by each name's hash bucket, then insertion)."""
    items = list(dict.fromkeys(names))
    capacity = 16
    while len(items) > capacity * 3 // 4:
        capacity *= 2
    ordered = sorted(items, key=lambda name: _java_spread_hash(name) & (capacity - 1))
    return f"[{', '.join(ordered)}]"


def _java_spread_hash(text: str) -> int:
    """java.lang.String.hashCode spread as java.util.HashMap spreads it (h ^ h >>> 16)."""
    h = java_string_hash(text) & 0xFFFFFFFF
    return h ^ (h >> 16)


def check_change(props: Mapping[str, str], per_broker: bool) -> None:
    """Kafka's `DynamicBrokerConfig.validateConfigs` on the whole set of a level's
    dynamic configs after the change; raises InvalidRequest with its words."""
    fixed = [name for name in props if is_kafka_config(name) and not is_dynamic(name)]
    if fixed:
        raise InvalidRequest(f"Cannot update these configs dynamically: {java_set(fixed)}")
    unprefixed = [name for name in props if name in LISTENER_ONLY_SECURITY]
    if unprefixed:
        raise InvalidRequest(
            "These security configs can be dynamically updated only per-listener using "
            f"the listener prefix: {java_set(unprefixed)}"
        )
    for name, value in props.items():
        check_value(listener_base(name), value)
    if not per_broker:
        broker_only = [
            name
            for name in props
            if name in _PER_BROKER_ONLY
            or (is_listener_config(name) and listener_base(name) not in _CLUSTER_LEVEL_LISTENER)
        ]
        if broker_only:
            raise InvalidRequest(
                "Cannot update these configs at default cluster level, broker id must be "
                f"specified: {java_set(broker_only)}"
            )


def check_value(name: str, value: str) -> None:
    """The value parses as the config's type and keeps within its bounds."""
    kind = _broker_table().get(name, (None, False))[0]
    if kind is None:
        return  # a custom config: Kafka keeps it unchecked
    text = value.strip()
    problem = _type_problem(kind, text)
    if problem is None:
        problem = _bound_problem(name, text)
    if problem is not None:
        shown = java_double(text) if kind == DOUBLE and _type_problem(kind, text) is None else text
        raise InvalidRequest(f"Invalid value {shown} for configuration {name}: {problem}")


def _type_problem(kind: int, text: str) -> str | None:
    try:
        if kind in (INT, SHORT, LONG):
            int(text)
        elif kind == DOUBLE:
            float(text)
    except ValueError:
        return f"Not a number of type {_TYPE_NAMES[kind]}"
    if kind == BOOLEAN and text.lower() not in ("true", "false"):
        return "Expected value to be either true or false"
    return None


def _bound_problem(name: str, text: str) -> str | None:
    twin = TOPIC_CONFIGS.get(_topic_twins().get(name, ""))
    choices = _BROKER_CHOICES.get(name) or (twin.choices if twin else ())
    if choices:
        parts = [p.strip() for p in text.split(",")] if is_list(name) else [text]
        if any(p not in choices for p in parts):
            return f"String must be one of: {', '.join(choices)}"
        return None
    at_least = _AT_LEAST.get(name, twin.at_least if twin else None)
    at_most = twin.at_most if twin else None
    if at_least is not None and float(text) < at_least:
        return f"Value must be at least {_number(at_least)}"
    if at_most is not None and float(text) > at_most:
        return f"Value must be no more than {_number(at_most)}"
    return None


#: Rules Kafka's broker config checks as a whole (`require`), with its words.
_REQUIRED_AT_LEAST = {"log.roll.ms": 1, "log.roll.jitter.ms": 0}


def check_requirements(name: str, value: str, cleaner_threads: int) -> None:
    """Kafka's KafkaConfig requirements on a config it has parsed (after the checks
    of each value); raises InvalidRequest with their words."""
    minimum = _REQUIRED_AT_LEAST.get(name)
    if minimum is not None and int(value) < minimum:
        raise InvalidRequest(
            f"requirement failed: {name} must be greater than or equal to {minimum}"
        )
    if name == "log.cleaner.dedupe.buffer.size" and int(value) < 1024 * 1024 * cleaner_threads:
        raise InvalidRequest(
            "requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per "
            "cleaner thread."
        )


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def check_reconfiguration(name: str, old: int, new: int) -> None:
    """A thread pool may change to between half and double its current size."""
    if new == old:
        return
    if name == CLEANER_THREADS:
        if new < 1:
            problem = "Log cleaner threads should be at least 1"
        elif new < old // 2:
            problem = (
                f"Log cleaner threads cannot be reduced to less than half the current value {old}"
            )
        elif new > old * 2:
            problem = f"Log cleaner threads cannot be increased to more than double the current value {old}"
        else:
            return
    else:
        start = f"Dynamic thread count update validation failed for {name}={new}"
        if new <= 0:
            problem = f"{start}, value should be at least 1"
        elif new < old // 2:
            problem = f"{start}, value should be at least half the current value {old}"
        elif new > old * 2:
            problem = f"{start}, value should not be greater than double the current value {old}"
        else:
            return
    raise InvalidRequest(
        "Invalid value org.apache.kafka.common.config.ConfigException: "
        f"{problem} for configuration Invalid dynamic configuration"
    )


def apply_operation(props: dict[str, str], name: str, operation: int, value: str | None) -> None:
    """One IncrementalAlterConfigs operation on a level's dynamic configs, as Kafka's
    `prepareIncrementalConfigs` (a list's current value defaults to Kafka's default)."""
    set_, delete, append, subtract = 0, 1, 2, 3
    if operation == set_:
        props[name] = value or ""
        return
    if operation == delete:
        props.pop(name, None)
        return
    if operation not in (append, subtract):
        raise InvalidRequest(f"Unknown operations type {operation}")
    if not is_kafka_config(name):
        raise InvalidConfig(f"Unknown config name: {name}")
    verb = "append" if operation == append else "subtract"
    if not is_list(name):
        raise InvalidConfig(f"Config value {verb} is not allowed for config key: {name}")
    current = props.get(name, kafka_default(name) or "")
    items = (value or "").split(",")
    if operation == append:
        old = [v for v in current.split(",") if v] if current else []
        props[name] = ",".join(old + [v for v in items if v not in old])
    else:
        props[name] = ",".join(v for v in current.split(",") if v not in items)


def emulator_refusal(props: Iterable[str]) -> str | None:
    """Why the emulator cannot take these configs, or None: it does not rebuild its
    listeners or their security while it runs, and loads no Java class."""
    refused = [
        name
        for name in props
        if name in _PER_BROKER_ONLY
        or is_listener_config(name)
        or name == "metric.reporters"
        or (is_kafka_config(name) and _broker_table()[name][0] == CLASS)
    ]
    if not refused:
        return None
    return (
        f"kafkatest's emulator cannot change {', '.join(refused)} while it runs: it does "
        "not rebuild its listeners or their security and loads no Java class. Start the "
        "broker with the security you need (see docs/how-to/security.md), or use "
        "--kafka-backend=kafka."
    )
