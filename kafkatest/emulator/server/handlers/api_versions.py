"""ApiVersions: the registered handlers' version ranges and the cluster's features.

ApiVersions v3+ also answers DescribeFeatures (Admin.describeFeatures, the
kafka-features tool): the feature levels this broker's software supports and the
levels finalized cluster-wide, as a Kafka 4.1 cluster formatted with defaults has
them.
"""

from __future__ import annotations

import re
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import HANDLERS, handles
from kafkatest.emulator.server.responses import NO_THROTTLE, make, response_types

#: (min, max) supported levels, as Kafka 4.1.1 reports them.
SUPPORTED_FEATURES: dict[str, tuple[int, int]] = {
    "group.version": (0, 1),
    "kraft.version": (0, 1),
    "metadata.version": (7, 27),
    "share.version": (0, 1),
    "transaction.version": (0, 2),
    "eligible.leader.replicas.version": (0, 1),
}

#: Finalized levels, as Kafka 4.1 finalizes them: transaction.version 2 makes Java
#: 4.x producers use KIP-890's transactions (EndTxn v5, implicit adds by Produce
#: v12), group.version 1 enables KIP-848's consumer groups. Level 0 features are
#: omitted from the answer, as Kafka omits them.
FINALIZED_FEATURES: dict[str, int] = {
    "group.version": 1,
    "transaction.version": 2,
    "eligible.leader.replicas.version": 1,
    "metadata.version": 27,
}

#: The metadata offset at which the features were finalized (Kafka: a log offset).
FINALIZED_EPOCH = 1

#: ApiVersions v4 is the first to list supported features whose minimum is 0
#: (KAFKA-17492: older clients reject a 0 minimum).
_ZERO_MIN_FEATURES_SINCE = 4


#: What ApiVersions v3+ accepts as a client's software name and version (Kafka's
#: ApiVersionsRequest.isValid); anything else is answered INVALID_REQUEST.
_SOFTWARE_NAME_OR_VERSION = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


@handles(18, 0, 4)
async def api_versions(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    if ctx.api_version >= 3 and not all(
        _SOFTWARE_NAME_OR_VERSION.fullmatch(text)
        for text in (request.client_software_name, request.client_software_version)
    ):
        return make(
            types.ApiVersionsResponse,
            error_code=ErrorCode.invalid_request,
            api_keys=(),
            throttle_time=NO_THROTTLE,
            supported_features=(),
            finalized_features_epoch=-1,
            finalized_features=(),
            zk_migration_ready=False,
        )
    api_keys = tuple(
        make(
            types.ApiVersion,
            api_key=s.api_key,
            min_version=s.advertised_min_version,
            max_version=s.max_version,
        )
        for s in sorted(HANDLERS.values(), key=lambda s: s.api_key)
    )
    supported: tuple[Any, ...] = ()
    finalized: tuple[Any, ...] = ()
    if hasattr(types, "SupportedFeatureKey"):
        supported = tuple(
            make(types.SupportedFeatureKey, name=name, min_version=low, max_version=high)
            for name, (low, high) in SUPPORTED_FEATURES.items()
            if low > 0 or ctx.api_version >= _ZERO_MIN_FEATURES_SINCE
        )
        finalized = tuple(
            make(
                types.FinalizedFeatureKey,
                name=name,
                max_version_level=level,
                min_version_level=level,
            )
            for name, level in FINALIZED_FEATURES.items()
            if level > 0
        )
    return make(
        types.ApiVersionsResponse,
        error_code=ErrorCode.none,
        api_keys=api_keys,
        throttle_time=NO_THROTTLE,
        supported_features=supported,
        finalized_features_epoch=FINALIZED_EPOCH,
        finalized_features=finalized,
        zk_migration_ready=False,
    )
