"""Handler registry: one module per API family registers its handlers here.

Handler contract: ``async def handler(ctx: RequestContext, request) -> response | None``
where `request` is the decoded kio entity and the response a kio entity of the
same API and version (None sends nothing, as for acks=0). The registered version
ranges are exactly what ApiVersions advertises, so a client is never offered a
version no handler answers.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

from kafkatest.emulator.server.faults import Handler


@dataclass(frozen=True, slots=True)
class ApiHandler:
    api_key: int
    min_version: int
    max_version: int
    handler: Handler
    #: The minimum ApiVersions advertises, when lower than the served one: Kafka
    #: advertises Produce from v0 for old librdkafka's feature detection but serves v3+.
    advertised_min: int | None = None

    @property
    def advertised_min_version(self) -> int:
        return self.min_version if self.advertised_min is None else self.advertised_min

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


HANDLERS: dict[int, ApiHandler] = {}


def handles(
    api_key: int, min_version: int, max_version: int, advertised_min: int | None = None
) -> Callable[[Handler], Handler]:
    """Register the decorated coroutine as the handler of `api_key` versions min..max."""

    def register(handler: Handler) -> Handler:
        existing = HANDLERS.get(api_key)
        if existing is not None and existing.handler is not handler:
            raise RuntimeError(
                f"API key {api_key} already handled by {existing.handler.__module__}"
            )
        HANDLERS[api_key] = ApiHandler(api_key, min_version, max_version, handler, advertised_min)
        return handler

    return register


_loaded = False


def load_handlers() -> dict[int, ApiHandler]:
    """Import every handler module in this package (once) and return the registry."""
    global _loaded
    if not _loaded:
        for module in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{module.name}")
        _loaded = True
    return HANDLERS
