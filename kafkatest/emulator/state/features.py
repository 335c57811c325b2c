"""Feature levels (KIP-584): what this software supports and what the cluster finalized.

Clients read them from ApiVersions (Admin.describeFeatures, kafka-features) and
choose protocols by them: Java 4.x producers use KIP-890's transactions only when
``transaction.version`` is 2, and KIP-848 consumer groups need ``group.version`` 1.
UpdateFeatures changes them under the rules of the emulated release's controller
(FeatureControlManager), with its error text: a level inside the supported range,
a downgrade only when asked for, ``metadata.version`` never below a version that
changed the metadata format, ``kraft.version`` never down.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kafkatest.emulator.state.errors import InvalidUpdateVersion

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
GROUP_VERSION = "group.version"
SHARE_VERSION = "share.version"
STREAMS_VERSION = "streams.version"

#: (min, max) supported levels, as the emulated release (`kafkatest.emulator.release`)
#: reports them, in its order.
SUPPORTED_FEATURES: dict[str, tuple[int, int]] = {
    "group.version": (0, 1),
    "kraft.version": (0, 1),
    "metadata.version": (7, 30),
    "share.version": (0, 1),
    "streams.version": (0, 1),
    "transaction.version": (0, 2),
    "eligible.leader.replicas.version": (0, 1),
}

#: The levels a cluster of the emulated release finalizes when formatted as the
#: `kafka` backend formats it: the release's defaults, but share and streams groups
#: off (`kafkatest.brokers.kafka_properties.FEATURES_OFF`; they are not emulated).
#: Level 0 features are left out of ApiVersions, as Kafka leaves them out.
DEFAULT_FINALIZED: dict[str, int] = {
    "group.version": 1,
    "transaction.version": 2,
    "eligible.leader.replicas.version": 1,
    "metadata.version": 30,
}

#: metadata.version levels whose metadata records changed (MetadataVersion's
#: didMetadataChange, 4.3.1): a downgrade across one of them could drop metadata,
#: so Kafka refuses it.
_METADATA_CHANGED_AT = frozenset({7, 8, 11, 13, 14, 15, 17, 23, 30})

#: UpdateFeatures' upgrade types (FeatureUpdate.UpgradeType).
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3

_FAILED_PREFIX = "The update failed for all features since the following feature had an error: "

#: What the emulator does not do, so it refuses the level that would turn it on.
_NOT_EMULATED = {
    (SHARE_VERSION, 1): "The kafkatest emulator does not emulate share groups (KIP-932).",
    (STREAMS_VERSION, 1): "The kafkatest emulator does not emulate streams groups (KIP-1071).",
}


@dataclass(frozen=True, slots=True)
class FeatureUpdate:
    feature: str
    level: int
    upgrade_type: int


class FeatureLevels:
    """The cluster's finalized feature levels and their epoch."""

    def __init__(self, controller_id: Callable[[], int]) -> None:
        #: The controller answering UpdateFeatures (it names itself in refusals).
        self._controller_id = controller_id
        self._finalized = dict(DEFAULT_FINALIZED)
        #: Kafka's epoch is the metadata log offset of the last change.
        self.epoch = 1

    @property
    def finalized(self) -> dict[str, int]:
        """Finalized levels above 0, as ApiVersions lists them."""
        return {name: level for name, level in self._finalized.items() if level > 0}

    def level(self, feature: str) -> int:
        return self._finalized.get(feature, 0)

    @property
    def consumer_protocol_enabled(self) -> bool:
        """KIP-848 groups need group.version 1 (kafka-features can take it to 0)."""
        return self.level(GROUP_VERSION) >= 1

    @property
    def kraft_reconfiguration(self) -> bool:
        """kraft.version 1 (KIP-853): voters have directory ids and can be changed."""
        return self.level(KRAFT_VERSION) >= 1

    def update(self, updates: Sequence[FeatureUpdate], validate_only: bool) -> None:
        """Apply every update or none; InvalidUpdateVersion names the first bad one."""
        proposed = {u.feature: u.level for u in updates}
        for update in updates:
            reason = self._refusal(update)
            if reason is not None:
                raise InvalidUpdateVersion(_FAILED_PREFIX + reason)
        if validate_only or not updates:
            return
        self._finalized.update(proposed)
        self.epoch += 1

    def _refusal(self, update: FeatureUpdate) -> str | None:
        name, level = update.feature, update.level

        def invalid(why: str) -> str:
            return f"Invalid update version {level} for feature {name}. {why}"

        if update.upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            return invalid("The controller does not support the given upgrade type.")
        if level < 0:
            return invalid("A feature version cannot be less than 0.")
        low, high = SUPPORTED_FEATURES.get(name, (0, 0))
        if not low <= level <= high:
            who = f"Local controller {self._controller_id()}"
            if high == 0:
                return invalid(f"{who} does not support this feature.")
            return invalid(f"{who} only supports versions {low}-{high}")
        current = self.level(name)
        if level < current and update.upgrade_type == UPGRADE:
            return invalid(
                "Can't downgrade the version of this feature without setting the "
                "upgrade type to either safe or unsafe downgrade."
            )
        if level > current and update.upgrade_type != UPGRADE:
            return invalid("Can't downgrade to a newer version.")
        if name == KRAFT_VERSION and level < current:
            return invalid("Can't downgrade the version of this feature.")
        if name == METADATA_VERSION and _crosses_a_metadata_change(level, current):
            why = (
                "Unsafe metadata downgrade is not supported in this version."
                if update.upgrade_type == UNSAFE_DOWNGRADE
                else "Refusing to perform the requested downgrade because it might "
                "delete metadata information."
            )
            return f"Unsupported metadata.version downgrade from {current} to {level}. {why}"
        refusal = _NOT_EMULATED.get((name, level))
        if refusal is not None:
            return invalid(refusal)
        return None


def _crosses_a_metadata_change(level: int, current: int) -> bool:
    return any(changed in _METADATA_CHANGED_AT for changed in range(level + 1, current + 1))
