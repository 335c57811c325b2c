"""Avro schema resolution as a compatibility check: can a reader schema read a writer's data?

Confluent's levels are all phrased as this one question (BACKWARD: the new schema reads
data written with the old; FORWARD: the old reads the new), and Avro's specification
("Schema Resolution") answers it. Schemas come parsed by fastavro, whose named types are
fully qualified and referenced by name, so each side carries its table of names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PRIMITIVES = frozenset(("null", "boolean", "int", "long", "float", "double", "bytes", "string"))
#: writer type -> reader types that may read it (Avro's promotions).
PROMOTIONS: dict[str, frozenset[str]] = {
    "int": frozenset(("long", "float", "double")),
    "long": frozenset(("float", "double")),
    "float": frozenset(("double",)),
    "string": frozenset(("bytes",)),
    "bytes": frozenset(("string",)),
}


@dataclass(frozen=True)
class Incompatibility:
    """One reason, named like Avro's `SchemaCompatibility.SchemaIncompatibilityType`."""

    error_type: str
    description: str
    path: str

    def render(self) -> str:
        return f"{{errorType:'{self.error_type}', description:'{self.description}', path:'{self.path}'}}"


class _Checker:
    def __init__(self, reader_names: dict[str, Any], writer_names: dict[str, Any]) -> None:
        self.reader_names = reader_names
        self.writer_names = writer_names
        # Named pairs being compared: a recursive type is compatible with itself.
        self.in_progress: set[tuple[str, str]] = set()

    def resolve(self, schema: Any, names: dict[str, Any]) -> Any:
        if isinstance(schema, str) and schema not in PRIMITIVES:
            return names.get(schema, schema)
        return schema

    def check(self, reader: Any, writer: Any, path: str) -> list[Incompatibility]:
        reader = self.resolve(reader, self.reader_names)
        writer = self.resolve(writer, self.writer_names)
        if isinstance(writer, list):
            problems: list[Incompatibility] = []
            for i, branch in enumerate(writer):
                problems += self.check(reader, branch, f"{path}/{i}")
            return problems
        if isinstance(reader, list):
            for branch in reader:
                if not self.check(branch, writer, path):
                    return []
            return [
                Incompatibility(
                    "MISSING_UNION_BRANCH",
                    f"The new schema is missing a type inside a union field at path '{path}' "
                    f"in the old schema: {_type_name(writer)}",
                    path,
                )
            ]
        r_type, w_type = _type_name(reader), _type_name(writer)
        r_kind, w_kind = _kind(reader), _kind(writer)
        if r_kind != w_kind:
            if w_kind in PROMOTIONS and r_kind in PROMOTIONS[w_kind]:
                return []
            return [
                Incompatibility(
                    "TYPE_MISMATCH",
                    f"The type (path '{path}') of a field in the new schema does not match "
                    f"with the old schema: reader type {r_type} is not compatible with writer type {w_type}",
                    path,
                )
            ]
        if r_kind in PRIMITIVES:
            return []
        if r_kind == "array":
            return self.check(reader["items"], writer["items"], f"{path}/items")
        if r_kind == "map":
            return self.check(reader["values"], writer["values"], f"{path}/values")
        if not _names_match(reader, writer):
            return [
                Incompatibility(
                    "NAME_MISMATCH",
                    f"The type name at path '{path}' in the new schema ({reader['name']}) "
                    f"does not match the old schema ({writer['name']})",
                    f"{path}/name",
                )
            ]
        if r_kind == "fixed":
            if reader["size"] != writer["size"]:
                return [
                    Incompatibility(
                        "FIXED_SIZE_MISMATCH",
                        f"The size of FIXED type field at path '{path}' in the new schema "
                        f"({reader['size']}) does not match with the old schema ({writer['size']})",
                        f"{path}/size",
                    )
                ]
            return []
        if r_kind == "enum":
            missing = [s for s in writer["symbols"] if s not in reader["symbols"]]
            if missing and "default" not in reader:
                return [
                    Incompatibility(
                        "MISSING_ENUM_SYMBOLS",
                        f"The new schema is missing enum symbols '{missing}' at path "
                        f"'{path}/symbols' in the old schema",
                        f"{path}/symbols",
                    )
                ]
            return []
        key = (reader["name"], writer["name"])
        if key in self.in_progress:
            return []
        self.in_progress.add(key)
        try:
            return self._record(reader, writer, path)
        finally:
            self.in_progress.discard(key)

    def _record(
        self, reader: dict[str, Any], writer: dict[str, Any], path: str
    ) -> list[Incompatibility]:
        problems: list[Incompatibility] = []
        written = {f["name"]: f for f in writer["fields"]}
        for i, field in enumerate(reader["fields"]):
            names = [field["name"], *field.get("aliases", ())]
            source = next((written[n] for n in names if n in written), None)
            field_path = f"{path}/fields/{i}"
            if source is None:
                if "default" not in field:
                    problems.append(
                        Incompatibility(
                            "READER_FIELD_MISSING_DEFAULT_VALUE",
                            f"The field '{field['name']}' at path '{field_path}' in the new schema "
                            "has no default value and is missing in the old schema",
                            field_path,
                        )
                    )
                continue
            problems += self.check(field["type"], source["type"], f"{field_path}/type")
        return problems


def _kind(schema: Any) -> str:
    if isinstance(schema, str):
        return schema
    kind = schema["type"]
    return kind if isinstance(kind, str) else "union"


def _type_name(schema: Any) -> str:
    if isinstance(schema, list):
        return "union"
    kind = _kind(schema)
    return kind.upper() if kind in PRIMITIVES else f"{kind.upper()}"


def _names_match(reader: dict[str, Any], writer: dict[str, Any]) -> bool:
    if reader["name"] == writer["name"]:
        return True
    short = writer["name"].rsplit(".", 1)[-1]
    return any(alias in (writer["name"], short) for alias in reader.get("aliases", ()))


def incompatibilities(
    reader: Any, reader_names: dict[str, Any], writer: Any, writer_names: dict[str, Any]
) -> list[Incompatibility]:
    """Why data written with `writer` cannot be read with `reader` ([] when it can)."""
    return _Checker(reader_names, writer_names).check(reader, writer, "")
