"""Configs kept per resource name (groups, client metrics subscriptions): only the
values set are kept, and a resource with none set is forgotten, as Kafka keeps them
in its metadata and ListConfigResources lists only those with a value."""

from __future__ import annotations


class NamedConfigs:
    def __init__(self) -> None:
        self._configs: dict[str, dict[str, str]] = {}

    def configs(self, name: str) -> dict[str, str]:
        """The values set on `name` (a copy)."""
        return dict(self._configs.get(name, {}))

    def names(self) -> list[str]:
        """The resources with a value set: what ListConfigResources lists."""
        return sorted(self._configs)

    def replace(self, name: str, configs: dict[str, str]) -> None:
        if configs:
            self._configs[name] = configs
        else:
            self._configs.pop(name, None)
