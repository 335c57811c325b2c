"""Replace personal data as it is captured, the same way every time.

A rule applies to a value field (a dotted path into a JSON or Avro value, ``customer.email``),
to ``key`` (the whole key, or ``key.<path>`` into a JSON key) or to ``header:<name>``:

* ``hash``: a keyed hash of the original (HMAC-SHA256 with the salt), a string for a
  string and an integer for an integer, so types and joins still hold;
* ``fake:<provider>``: a Faker value (``fake:email``, ``fake:name``) seeded by that hash,
  so one original always gets the same fake;
* ``drop``: the field is left out; ``keep``: kept as is (said, so a review sees it).

The same original gives the same replacement within a capture and, with the same salt,
across captures; without ``--salt`` a random one is drawn, and it is never written down.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any

RULES = ("hash", "drop", "keep")
_DROP = object()


@dataclass(frozen=True)
class Rule:
    """One ``FIELD=RULE``: where (``value``, ``key`` or ``header``), the path, what."""

    where: str
    path: tuple[str, ...]
    action: str
    provider: str = ""

    @property
    def field(self) -> str:
        if self.where == "header":
            return f"header:{self.path[0]}"
        return ".".join((self.where, *self.path)) if self.where == "key" else ".".join(self.path)

    @property
    def text(self) -> str:
        return f"fake:{self.provider}" if self.action == "fake" else self.action


def parse_rule(spec: str) -> Rule:
    """``FIELD=RULE`` as a `Rule`; a clear error for anything else."""
    name, sep, rule = spec.partition("=")
    if not sep or not name or not rule:
        raise ValueError(f"--anonymize {spec!r}: give FIELD=RULE (e.g. email=hash)")
    action, _, provider = rule.partition(":")
    if action == "fake":
        if not provider:
            raise ValueError(f"--anonymize {spec!r}: fake needs a provider (fake:email)")
        _check_provider(provider, spec)
    elif action not in RULES or provider:
        raise ValueError(f"--anonymize {spec!r}: RULE is hash, drop, keep or fake:<faker provider>")
    if name.startswith("header:"):
        return Rule("header", (name[len("header:") :],), action, provider)
    if name == "key" or name.startswith("key."):
        return Rule("key", tuple(name.split(".")[1:]), action, provider)
    return Rule("value", tuple(name.split(".")), action, provider)


def _check_provider(provider: str, spec: str) -> None:
    from faker import Faker

    if not callable(getattr(Faker(), provider, None)):
        raise ValueError(f"--anonymize {spec!r}: Faker has no provider {provider!r}")


class Anonymizer:
    """Applies the rules with one salt; remembers nothing of the originals."""

    def __init__(self, rules: list[Rule], salt: bytes) -> None:
        self.rules = rules
        self.salt = salt
        self._faker: Any = None

    def replace(self, original: Any, rule: Rule) -> Any:
        """The replacement for one original value under `rule` (`_DROP` to leave it out)."""
        if rule.action == "keep" or original is None:
            return original
        if rule.action == "drop":
            return _DROP
        digest = hmac.new(self.salt, _canonical(original), hashlib.sha256).digest()
        if rule.action == "hash":
            if isinstance(original, bool):
                return original
            if isinstance(original, int):
                return int.from_bytes(digest[:4], "big") >> 1
            return digest.hex()[:24]
        return self._fake(rule.provider, digest)

    def _fake(self, provider: str, digest: bytes) -> str:
        if self._faker is None:
            from faker import Faker

            self._faker = Faker()
        self._faker.seed_instance(int.from_bytes(digest[:8], "big"))
        return str(getattr(self._faker, provider)())

    def apply(self, data: Any, where: str) -> Any:
        """`data` (a decoded value or key) with every rule for `where` applied."""
        for rule in self.rules:
            if rule.where != where:
                continue
            if not rule.path:
                replaced = self.replace(data, rule)
                data = None if replaced is _DROP else replaced
            else:
                _apply_at(data, rule.path, lambda v, r=rule: self.replace(v, r))
        return data


def _apply_at(data: Any, path: tuple[str, ...], change: Any) -> None:
    """Change the field at `path` inside nested dicts (and lists of them), in place."""
    if isinstance(data, list):
        for item in data:
            _apply_at(item, path, change)
        return
    if not isinstance(data, dict) or path[0] not in data:
        return
    if len(path) > 1:
        _apply_at(data[path[0]], path[1:], change)
        return
    replaced = change(data[path[0]])
    if replaced is _DROP:
        del data[path[0]]
    else:
        data[path[0]] = replaced


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()


def field_paths(data: Any, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every leaf path of a decoded value (lists looked into), for the field review."""
    if isinstance(data, list):
        return set().union(*(field_paths(item, prefix) for item in data)) if data else {prefix}
    if isinstance(data, dict) and data:
        return set().union(*(field_paths(v, (*prefix, str(k))) for k, v in data.items()))
    return {prefix}
