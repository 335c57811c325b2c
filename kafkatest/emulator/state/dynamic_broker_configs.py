"""Broker configs changed while the cluster runs (KIP-226), and the broker-level
values topics fall back on.

Kafka keeps two levels of dynamic broker configs: cluster-wide defaults (the
resource named "") and per broker (named by its id), above the settings the broker
was started with (static) and Kafka's defaults. A topic config that is not set on
the topic takes its broker twin's value from the most specific of these levels
(`log.retention.ms` for `retention.ms`, `message.max.bytes` for
`max.message.bytes`), so a change of the twin reaches every topic that does not
override it, as on Kafka.

The emulated brokers share one log per partition, so a per-broker value of a topic
default applies to every partition (the lowest broker id that sets it wins); Kafka
applies it on that broker only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kafkatest.emulator.state import broker_config_rules as rules
from kafkatest.emulator.state.broker_configs import Layers, kafka_default, kafka_defaults
from kafkatest.emulator.state.errors import InvalidConfig, InvalidRequest
from kafkatest.emulator.state.topic_configs import BROKER_SYNONYMS, TOPIC_CONFIGS

#: Config sources of the levels, most specific first (DescribeConfigs' codes).
DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, DEFAULT = 2, 3, 4, 5
_ELR_FEATURE = "eligible.leader.replicas.version"


def _bootstrapped_defaults() -> dict[str, str]:
    """The cluster-wide values a new Kafka 4.1 cluster starts with (its format step
    writes min.insync.replicas for ELR)."""
    return {
        entry.name: entry.value
        for entry in kafka_defaults()
        if entry.source == DYNAMIC_DEFAULT and entry.value is not None
    }


class DynamicBrokerConfigs:
    """The dynamic levels, and every broker config's value through all four."""

    def __init__(
        self,
        static: Mapping[str, str],
        wiring: Callable[[int], Mapping[str, str]] = lambda _broker_id: {},
        feature_level: Callable[[str], int] = lambda _feature: 0,
    ) -> None:
        #: The settings the brokers were started with, by Kafka name (fixed).
        self._static = dict(static)
        #: A broker's own static settings (ids, listeners), by its id.
        self._wiring = wiring
        self._feature_level = feature_level
        #: A new Kafka cluster formats min.insync.replicas cluster-wide from its
        #: static setting, so that level starts with the static value when there is one.
        self.cluster_default: dict[str, str] = {
            name: self._static.get(name, value) for name, value in _bootstrapped_defaults().items()
        }
        self.per_broker: dict[int, dict[str, str]] = {}
        #: Moves on with every change, so topics know their derived settings are stale.
        self.version = 0

    def level(self, broker_id: int | None) -> dict[str, str]:
        """The configs set at one level (None: cluster-wide), a copy."""
        if broker_id is None:
            return dict(self.cluster_default)
        return dict(self.per_broker.get(broker_id, {}))

    def layers(self, broker_id: int) -> Layers:
        """(source, values) of broker `broker_id`, most specific first, without Kafka's
        defaults (the caller's table has them)."""
        return [
            (DYNAMIC_BROKER, self.per_broker.get(broker_id, {})),
            (DYNAMIC_DEFAULT, self.cluster_default),
            (STATIC, {**self._wiring(broker_id), **self._static}),
        ]

    def current(self, broker_id: int, name: str) -> str | None:
        """The value a broker runs with: its own, the cluster's, static, Kafka's."""
        found = (values[name] for _source, values in self.layers(broker_id) if name in values)
        return next(found, kafka_default(name))

    def change(
        self, broker_id: int | None, props: dict[str, str], validate_only: bool, receiver: int
    ) -> None:
        """Make `props` the whole of a level's dynamic configs after Kafka's checks,
        unless `validate_only`; raises the StateError Kafka answers with. `receiver`
        is the broker that checks the change against its current values."""
        rules.check_change(props, per_broker=broker_id is not None)
        cleaner_threads = int(
            props.get(rules.CLEANER_THREADS)
            or self.current(broker_id or 1, rules.CLEANER_THREADS)
            or 1
        )
        for name, value in props.items():
            rules.check_requirements(name, value.strip(), cleaner_threads)
        for name in rules.THREAD_POOLS | {rules.CLEANER_THREADS}:
            if name in props:
                old = int(self.current(receiver, name) or "0")
                rules.check_reconfiguration(name, old, int(props[name].strip()))
        refusal = rules.emulator_refusal(props)
        if refusal is not None:
            raise InvalidRequest(refusal)
        if (
            broker_id is None
            and "min.insync.replicas" not in props
            and self._feature_level(_ELR_FEATURE) >= 1
        ):
            raise InvalidConfig(
                "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."
            )
        if validate_only:
            return
        if broker_id is None:
            self.cluster_default = dict(props)
        elif props:
            self.per_broker[broker_id] = dict(props)
        else:
            self.per_broker.pop(broker_id, None)
        self.version += 1

    def topic_default(self, topic_config: str) -> str:
        """What a topic that does not set `topic_config` runs with: its broker twin
        at the most specific level that sets it (the twin's coarser synonyms, such as
        `log.retention.hours`, count at the static level, where they can be set)."""
        twin = BROKER_SYNONYMS.get(topic_config)
        if twin is not None:
            for broker_id in sorted(self.per_broker):
                if twin in self.per_broker[broker_id]:
                    return self.per_broker[broker_id][twin].strip()
            if twin in self.cluster_default:
                return self.cluster_default[twin].strip()
            for name, scale in COARSER_SYNONYMS.get(twin, ((twin, 1),)):
                if name in self._static:
                    return (
                        str(int(self._static[name]) * scale) if scale != 1 else self._static[name]
                    )
        return TOPIC_CONFIGS[topic_config].default


#: A broker twin and the synonyms that set it in coarser units, in Kafka's order of
#: precedence, with the factor to the twin's unit.
COARSER_SYNONYMS: dict[str, tuple[tuple[str, int], ...]] = {
    "log.retention.ms": (
        ("log.retention.ms", 1),
        ("log.retention.minutes", 60_000),
        ("log.retention.hours", 3_600_000),
    ),
    "log.roll.ms": (("log.roll.ms", 1), ("log.roll.hours", 3_600_000)),
    "log.roll.jitter.ms": (("log.roll.jitter.ms", 1), ("log.roll.jitter.hours", 3_600_000)),
}
