"""Admin requests the cluster administration tests send as raw kio entities."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from typing import Any

from kio.schema.api_versions.v4.request import ApiVersionsRequest
from kio.static.primitive import i8, i16
from raw_client import ask

from kafkatest import Broker

UPDATE_FEATURES = 57
#: UpdateFeatures' upgrade types.
UPGRADE, SAFE, UNSAFE = 1, 2, 3
FAILED = "The update failed for all features since the following feature had an error: "


def request_entity(api: str, version: int, entity: str, **fields: Any) -> Any:
    """e.g. request_entity("unregister_broker", 0, "UnregisterBrokerRequest", broker_id=1)."""
    module = importlib.import_module(f"kio.schema.{api}.v{version}.request")
    return getattr(module, entity)(**fields)


def update_features(
    broker: Broker, *updates: tuple[str, int, int], validate_only: bool = False, version: int = 2
) -> Any:
    keys = tuple(
        request_entity(
            "update_features",
            version,
            "FeatureUpdateKey",
            feature=feature,
            max_version_level=i16(level),
            upgrade_type=i8(kind),
        )
        for feature, level, kind in updates
    )
    request = request_entity(
        "update_features",
        version,
        "UpdateFeaturesRequest",
        feature_updates=keys,
        validate_only=validate_only,
    )
    return ask(broker.bootstrap_servers, UPDATE_FEATURES, version, request)


def finalized(broker: Broker) -> tuple[dict[str, int], int]:
    request = ApiVersionsRequest(client_software_name="kafkatest", client_software_version="1")
    response = ask(broker.bootstrap_servers, 18, 4, request)
    levels = {f.name: f.max_version_level for f in response.finalized_features}
    return levels, response.finalized_features_epoch


def finalized_when(
    broker: Broker, settled: Callable[[dict[str, int]], bool], timeout_s: float = 10
) -> tuple[dict[str, int], int]:
    """The finalized levels once `settled` holds: Kafka's broker learns a change from
    the controller's metadata a moment after UpdateFeatures is answered."""
    deadline = time.monotonic() + timeout_s
    while not settled((answer := finalized(broker))[0]):
        assert time.monotonic() < deadline, f"feature levels never settled: {answer[0]}"
        time.sleep(0.05)
    return answer
