"""UpdateFeatures: kafka-features upgrade/downgrade/disable, Admin.updateFeatures.

The rules live in `state.features`; this module only maps the request's versions.
v0 asks for a downgrade with allow_downgrade, which Kafka 4.1's controller no
longer reads: it takes every v0 update as an upgrade (observed on the `kafka`
backend), so a v0 downgrade is refused there, and here.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.responses import error_code_of, respond, response_types
from kafkatest.emulator.state.errors import InvalidUpdateVersion
from kafkatest.emulator.state.features import UPGRADE, FeatureUpdate

#: What Kafka writes in a v0-1 per-feature result that succeeded (ApiError.NONE's text).
_SUCCEEDED = "NONE"


@handles(57, 0, 2)
async def update_features(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    updates = [
        FeatureUpdate(u.feature, u.max_version_level, getattr(u, "upgrade_type", UPGRADE))
        for u in request.feature_updates
    ]
    try:
        ctx.state.features.update(updates, getattr(request, "validate_only", False))
    except InvalidUpdateVersion as exc:
        return respond(types.UpdateFeaturesResponse, error_code_of(exc), str(exc), results=())
    results = ()
    if ctx.api_version < 2:  # v2 dropped the per-feature results
        results = tuple(
            respond(types.UpdatableFeatureResult, ErrorCode.none, _SUCCEEDED, feature=name)
            for name in dict.fromkeys(u.feature for u in updates)
        )
    return respond(types.UpdateFeaturesResponse, results=results)
