"""ApiVersions: advertise exactly the registered handlers' version ranges."""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import HANDLERS, handles
from kafkatest.emulator.server.responses import NO_THROTTLE, make, response_types


@handles(18, 0, 4)
async def api_versions(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    api_keys = tuple(
        make(
            types.ApiVersion,
            api_key=s.api_key,
            min_version=s.min_version,
            max_version=s.max_version,
        )
        for s in sorted(HANDLERS.values(), key=lambda s: s.api_key)
    )
    return make(
        types.ApiVersionsResponse,
        error_code=ErrorCode.none,
        api_keys=api_keys,
        throttle_time=NO_THROTTLE,
        supported_features=(),
        finalized_features_epoch=-1,
        finalized_features=(),
        zk_migration_ready=False,
    )
