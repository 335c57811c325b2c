"""ApiVersions: the registered handlers' version ranges and the cluster's features.

ApiVersions v3+ also answers DescribeFeatures (Admin.describeFeatures, the
kafka-features tool): the feature levels this broker's software supports and the
levels finalized cluster-wide (`state.features`; UpdateFeatures changes them).
"""

from __future__ import annotations

import re
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import HANDLERS, handles
from kafkatest.emulator.server.responses import make, make_from, respond, response_types
from kafkatest.emulator.state.features import SUPPORTED_FEATURES

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
        return respond(
            types.ApiVersionsResponse,
            ErrorCode.invalid_request,
            api_keys=(),
            supported_features=(),
            finalized_features_epoch=-1,
            finalized_features=(),
            zk_migration_ready=False,
        )
    api_keys = tuple(
        make_from(types.ApiVersion, s, min_version=s.advertised_min_version)
        for s in sorted(HANDLERS.values(), key=lambda s: s.api_key)
    )
    supported: tuple[Any, ...] = ()
    finalized: tuple[Any, ...] = ()
    features = ctx.state.features
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
            for name, level in features.finalized.items()
        )
    return respond(
        types.ApiVersionsResponse,
        api_keys=api_keys,
        supported_features=supported,
        finalized_features_epoch=features.epoch,
        finalized_features=finalized,
        zk_migration_ready=False,
    )
