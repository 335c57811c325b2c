"""YAML read with kafkatest's bounds: no aliases, bounded nesting.

A 600-byte YAML "billion laughs" (anchors whose aliases name each other, nine levels
deep) took 75 s and 2.5 GB to load as a scenario file: the alias is expanded by
every consumer of the value. kafkatest's YAML files (scenarios, fixtures) are data a
person writes out, so `load` refuses any alias, at its line, as it meets it (nothing
has been expanded yet), and nesting deeper than `limits.MAX_NESTING`.
"""

from __future__ import annotations

from typing import Any

import yaml

from kafkatest._ground.bounded_json import JsonRefused, check_nesting
from kafkatest.limits import MAX_NESTING


class YamlRefused(ValueError):
    """Text that is not YAML kafkatest reads; the message says why, and where."""


class _NoAliases(yaml.SafeLoader):
    """PyYAML's safe loader, refusing an alias (``*name``) where it stands, and a flow
    collection (``[``, ``{``) nested past `MAX_NESTING` as the scanner meets it: the
    scanner's work per bracket grows with the depth, so 5,000 brackets took 5 s."""

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:
        if self.flow_level >= MAX_NESTING:
            raise YamlRefused(f"line {self.line + 1}: it nests deeper than {MAX_NESTING} levels")
        super().fetch_flow_collection_start(TokenClass)  # type: ignore[misc]

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise YamlRefused(
                f"line {event.start_mark.line + 1}: an alias (*{event.anchor}): kafkatest's "
                "YAML files write every value out (aliases are refused, as a file of a few "
                "hundred bytes can expand to gigabytes)"
            )
        return super().compose_node(parent, index)


def load(text: str) -> Any:
    """The value of one YAML document, or YamlRefused (not YAML, an alias, too deep)."""
    try:
        value = yaml.load(text, Loader=_NoAliases)
    except RecursionError:
        raise YamlRefused("it nests too deeply") from None
    except yaml.YAMLError as exc:
        raise YamlRefused(f"not valid YAML: {exc}") from None
    try:
        check_nesting(value)
    except JsonRefused as exc:
        raise YamlRefused(str(exc)) from None
    return value
