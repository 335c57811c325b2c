"""Requests Kafka refuses while parsing them, after their bytes decoded.

Some of Kafka's request classes check their fields as they are built
(`normalizeAndValidate` in CreateAclsRequest, DescribeAclsRequest and
DeleteAclsRequest): what they refuse never reaches a handler, and the broker
closes the connection for a request it could not parse. `parse_refusal` applies the
same checks to a decoded request; the dispatcher closes the connection when one
refuses it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

#: The UNKNOWN code of Kafka's ACL enums (ResourceType, PatternType, AclOperation,
#: AclPermissionType): a request naming it is refused.
_UNKNOWN = 0
_FILTER_CODES = ("pattern_type_filter", "resource_type_filter", "operation", "permission_type")
_CREATION_CODES = ("resource_pattern_type", "resource_type", "operation", "permission_type")


def _unknown_codes(entries: Iterable[Any], fields: tuple[str, ...], what: str) -> str | None:
    for entry in entries:
        named = [f for f in fields if getattr(entry, f) == _UNKNOWN]
        if named:
            return f"{what} contains UNKNOWN elements ({', '.join(named)})"
    return None


_RULES: dict[int, Callable[[Any], str | None]] = {
    29: lambda r: _unknown_codes((r,), _FILTER_CODES, "DescribeAclsRequest"),
    30: lambda r: _unknown_codes(r.creations, _CREATION_CODES, "CreateAclsRequest"),
    31: lambda r: _unknown_codes(r.filters, _FILTER_CODES, "DeleteAclsRequest"),
}


def parse_refusal(api_key: int, request: Any) -> str | None:
    """Why Kafka would refuse this decoded request as it parses it, or None."""
    rule = _RULES.get(api_key)
    return None if rule is None else rule(request)
