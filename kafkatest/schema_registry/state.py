"""The registry's state: subjects, their versions, schema ids and compatibility levels.

It knows nothing of HTTP: the REST layer and the library API both call it, and every
refusal is a `RegistryError` carrying Confluent's status, error code and message.
One lock serializes changes, as Confluent's single leader does.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from kafkatest.schema_registry import errors
from kafkatest.schema_registry.avro_compat import incompatibilities
from kafkatest.schema_registry.schemas import SCHEMA_TYPES, Reference, Schema, canonical, parse_avro

DEFAULT_COMPATIBILITY = "BACKWARD"
MAX_VERSION = 2**31 - 1


@dataclass
class Version:
    version: int
    schema_id: int
    deleted: bool = False


@dataclass
class Registered:
    """One subject version as clients see it."""

    subject: str
    version: int
    schema_id: int
    schema: Schema

    def to_json(self) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "subject": self.subject,
            "version": self.version,
            "id": self.schema_id,
        }
        answer.update(schema_json(self.schema))
        return answer


def schema_json(schema: Schema) -> dict[str, Any]:
    """Confluent leaves out ``schemaType`` for Avro and ``references`` when there are none."""
    answer: dict[str, Any] = {}
    if schema.schema_type != "AVRO":
        answer["schemaType"] = schema.schema_type
    if schema.references:
        answer["references"] = [r.to_json() for r in schema.references]
    answer["schema"] = schema.text
    return answer


def parse_version(text: str | int) -> int | str:
    """A version id from a path: 1..2^31-1, or "latest" (-1 means latest too, as in Confluent)."""
    if isinstance(text, int) or (isinstance(text, str) and text.lstrip("-").isdigit()):
        number = int(text)
        if number == -1:
            return "latest"
        if 1 <= number <= MAX_VERSION:
            return number
        raise errors.invalid_version(str(text))
    if text == "latest":
        return "latest"
    raise errors.invalid_version(str(text))


class SchemaRegistry:
    """Subjects -> versions -> schema ids, as Confluent Schema Registry keeps them."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._schemas: dict[int, Schema] = {}
        self._ids: dict[tuple[str, str, tuple[Reference, ...]], int] = {}
        self._subjects: dict[str, list[Version]] = {}
        self._global_level = DEFAULT_COMPATIBILITY
        self._subject_levels: dict[str, str] = {}

    # -- schemas in, validated --------------------------------------------------------

    def make_schema(
        self,
        text: object,
        schema_type: object = "AVRO",
        references: object = (),
    ) -> Schema:
        """A validated `Schema` from a request's fields."""
        if not isinstance(text, str) or not text.strip():
            raise errors.invalid_schema('null: the request needs a non-empty "schema" string')
        kind = "AVRO" if schema_type is None else schema_type
        if not isinstance(kind, str) or kind.upper() not in SCHEMA_TYPES:
            raise errors.RegistryError(
                422, 42201, f"Invalid schema type {kind!r}; use one of {', '.join(SCHEMA_TYPES)}"
            )
        refs = self._references(references)
        with self._lock:
            stored = canonical(kind.upper(), text, refs, self._resolve)
        return Schema(kind.upper(), stored, refs)

    def _references(self, references: object) -> tuple[Reference, ...]:
        if references is None:
            return ()
        if not isinstance(references, (list, tuple)):
            raise errors.invalid_schema("references: expected a list")
        refs = []
        for item in references:
            if isinstance(item, Reference):
                refs.append(item)
                continue
            if not (
                isinstance(item, dict)
                and isinstance(item.get("name"), str)
                and isinstance(item.get("subject"), str)
                and isinstance(item.get("version"), int)
            ):
                raise errors.invalid_schema(
                    f"reference {item!r}: expected {{name: str, subject: str, version: int}}"
                )
            refs.append(Reference(item["name"], item["subject"], item["version"]))
        return tuple(refs)

    def _resolve(self, ref: Reference) -> Schema:
        try:
            return self.version(ref.subject, ref.version).schema
        except errors.RegistryError:
            raise errors.invalid_schema(
                f"reference {ref.name!r}: subject '{ref.subject}' version {ref.version} "
                "does not exist; register it first"
            ) from None

    # -- subjects and versions ---------------------------------------------------------

    def register(self, subject: str, schema: Schema) -> Registered:
        """Register `schema` under `subject`; an already-registered schema keeps its version."""
        with self._lock:
            versions = self._subjects.get(subject, [])
            for v in versions:
                if not v.deleted and self._schemas[v.schema_id].identity() == schema.identity():
                    return Registered(subject, v.version, v.schema_id, self._schemas[v.schema_id])
            problems = self._check(subject, schema, self._to_check(subject))
            if problems:
                raise errors.incompatible(subject, problems)
            schema_id = self._ids.get(schema.identity())
            if schema_id is None:
                schema_id = len(self._schemas) + 1
                while schema_id in self._schemas:
                    schema_id += 1
                self._schemas[schema_id] = schema
                self._ids[schema.identity()] = schema_id
            number = max((v.version for v in versions), default=0) + 1
            self._subjects.setdefault(subject, []).append(Version(number, schema_id))
            return Registered(subject, number, schema_id, schema)

    def lookup(self, subject: str, schema: Schema, deleted: bool = False) -> Registered:
        with self._lock:
            live = self._live(subject, deleted)
            if not live:
                raise errors.subject_not_found(subject)
            for v in live:
                if self._schemas[v.schema_id].identity() == schema.identity():
                    return Registered(subject, v.version, v.schema_id, self._schemas[v.schema_id])
            raise errors.schema_not_found()

    def subjects(self, deleted: bool = False, prefix: str = "") -> list[str]:
        with self._lock:
            return sorted(
                s
                for s, vs in self._subjects.items()
                if s.startswith(prefix) and any(deleted or not v.deleted for v in vs)
            )

    def versions(self, subject: str, deleted: bool = False) -> list[int]:
        with self._lock:
            found = [v.version for v in self._live(subject, deleted)]
            if not found:
                raise errors.subject_not_found(subject)
            return found

    def version(self, subject: str, version: int | str, deleted: bool = False) -> Registered:
        number = parse_version(version)
        with self._lock:
            live = self._live(subject, deleted)
            if not live:
                raise errors.subject_not_found(subject)
            found = _pick(live, number, subject)
            return Registered(
                subject, found.version, found.schema_id, self._schemas[found.schema_id]
            )

    def schema(self, schema_id: int) -> Schema:
        with self._lock:
            if schema_id not in self._schemas:
                raise errors.schema_not_found(schema_id)
            return self._schemas[schema_id]

    def subject_versions_of(self, schema_id: int, deleted: bool = False) -> list[tuple[str, int]]:
        with self._lock:
            if schema_id not in self._schemas:
                raise errors.schema_not_found(schema_id)
            return [
                (s, v.version)
                for s, vs in sorted(self._subjects.items())
                for v in vs
                if v.schema_id == schema_id and (deleted or not v.deleted)
            ]

    def delete_subject(self, subject: str, permanent: bool = False) -> list[int]:
        with self._lock:
            versions = self._subjects.get(subject)
            if not versions:
                raise errors.subject_not_found(subject)
            if permanent:
                if any(not v.deleted for v in versions):
                    raise errors.subject_not_soft_deleted(subject)
                del self._subjects[subject]
                self._subject_levels.pop(subject, None)
                return [v.version for v in versions]
            live = _undeleted(versions)
            if not live:
                raise errors.subject_soft_deleted(subject)
            for v in live:
                v.deleted = True
            return [v.version for v in live]

    def delete_version(self, subject: str, version: int | str, permanent: bool = False) -> int:
        number = parse_version(version)
        with self._lock:
            versions = self._subjects.get(subject)
            if not versions:
                raise errors.subject_not_found(subject)
            # "latest" is the last live version, but a permanent delete takes any.
            pool = versions if permanent or number != "latest" else _undeleted(versions)
            found = _pick(pool, number, subject)
            if permanent:
                if not found.deleted:
                    raise errors.version_not_soft_deleted(subject, found.version)
                versions.remove(found)
                if not versions:
                    del self._subjects[subject]
                return found.version
            if found.deleted:
                raise errors.version_soft_deleted(subject, found.version)
            found.deleted = True
            return found.version

    def _live(self, subject: str, deleted: bool) -> list[Version]:
        return [v for v in self._subjects.get(subject, []) if deleted or not v.deleted]

    # -- compatibility -----------------------------------------------------------------

    def compatibility(self, subject: str | None = None, default_to_global: bool = False) -> str:
        with self._lock:
            if subject is None:
                return self._global_level
            if subject in self._subject_levels:
                return self._subject_levels[subject]
            if default_to_global:
                return self._global_level
            raise errors.subject_level_compatibility_not_configured(subject)

    def set_compatibility(self, level: object, subject: str | None = None) -> str:
        if not isinstance(level, str) or level.upper() not in errors.COMPATIBILITY_LEVELS:
            raise errors.invalid_compatibility_level(level)
        with self._lock:
            if subject is None:
                self._global_level = level.upper()
            else:
                self._subject_levels[subject] = level.upper()
        return level.upper()

    def delete_compatibility(self, subject: str | None = None) -> str:
        with self._lock:
            if subject is None:
                previous, self._global_level = self._global_level, DEFAULT_COMPATIBILITY
                return previous
            if subject not in self._subjects and subject not in self._subject_levels:
                raise errors.subject_not_found(subject)
            level = self._subject_levels.pop(subject, None)
            return level if level is not None else self._global_level

    def test_compatibility(
        self, subject: str, schema: Schema, version: int | str | None
    ) -> list[str]:
        """Why `schema` may not follow `version` (all versions the level names for None)."""
        with self._lock:
            if version is None:
                against = self._to_check(subject)
            else:
                registered = self.version(subject, version)
                against = [(registered.version, registered.schema)]
            return self._check(subject, schema, against)

    def _to_check(self, subject: str) -> list[tuple[int, Schema]]:
        live = self._live(subject, deleted=False)
        level = self.compatibility(subject, default_to_global=True)
        chosen = live if level.endswith("_TRANSITIVE") else live[-1:]
        return [(v.version, self._schemas[v.schema_id]) for v in chosen]

    def _check(self, subject: str, schema: Schema, against: list[tuple[int, Schema]]) -> list[str]:
        level = self.compatibility(subject, default_to_global=True)
        if level == "NONE" or not against:
            return []
        if schema.schema_type != "AVRO":
            # Only Avro's resolution rules are implemented (docs/explanation/differences.md).
            return []
        new, new_names = parse_avro(schema.text, schema.references, self._resolve)
        for number, old_schema in reversed(against):
            if old_schema.schema_type != "AVRO":
                continue
            old, old_names = parse_avro(old_schema.text, old_schema.references, self._resolve)
            found = []
            if level.startswith(("BACKWARD", "FULL")):
                found += incompatibilities(new, new_names, old, old_names)
            if level.startswith(("FORWARD", "FULL")):
                found += incompatibilities(old, old_names, new, new_names)
            if found:
                return [
                    *(p.render() for p in found),
                    f"{{oldSchemaVersion: {number}}}",
                    f"{{oldSchema: '{old_schema.text}'}}",
                    f"{{compatibility: '{level}'}}",
                ]
        return []


def _undeleted(versions: list[Version]) -> list[Version]:
    return [v for v in versions if not v.deleted]


def _pick(pool: list[Version], number: int | str, subject: str) -> Version:
    """Version `number` of `pool` (``"latest"``: its last), or the registry's error."""
    if number == "latest":
        if not pool:
            raise errors.subject_not_found(subject)
        return pool[-1]
    match = [v for v in pool if v.version == number]
    if not match:
        raise errors.version_not_found(number)
    return match[0]
