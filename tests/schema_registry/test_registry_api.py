"""The embedded registry answers confluent-kafka's own SchemaRegistryClient as Confluent's does.

Error codes and messages are Confluent Schema Registry's (its `Errors` and REST exception
classes); the compatibility cases are Avro's schema-resolution rules as Confluent's
levels apply them (BACKWARD: the new schema reads the old one's data; FORWARD: the old
reads the new; FULL both; _TRANSITIVE against every live version, not only the latest).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

pytest.importorskip("fastavro", reason="pip install 'kafkatest[schemas]'")

from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from kafkatest.schema_registry import SchemaRegistryServer, start_schema_registry


def record(name: str, *fields: dict[str, object]) -> str:
    return json.dumps({"type": "record", "name": name, "namespace": "t", "fields": list(fields)})


A = {"name": "a", "type": "int"}
B_NO_DEFAULT = {"name": "b", "type": "string"}
B_DEFAULT = {"name": "b", "type": "string", "default": "x"}
V1 = record("User", A)


@pytest.fixture
def registry() -> Iterator[SchemaRegistryServer]:
    # A fresh registry per test: ids and levels start from Confluent's defaults.
    with start_schema_registry() as server:
        yield server


@pytest.fixture
def client(registry: SchemaRegistryServer) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": registry.url})


def refused(call: object, *args: object) -> SchemaRegistryError:
    with pytest.raises(SchemaRegistryError) as info:
        call(*args)  # type: ignore[operator]
    return info.value


def test_register_lookup_and_read_back(client: SchemaRegistryClient) -> None:
    first = client.register_schema("users-value", Schema(V1, "AVRO"))
    assert first == 1
    # The same schema under the same subject keeps its id and version; under another
    # subject it keeps its id and gets that subject's version 1.
    assert client.register_schema("users-value", Schema(V1, "AVRO")) == 1
    assert client.register_schema("other-value", Schema(V1, "AVRO")) == 1
    assert client.get_subjects() == ["other-value", "users-value"]
    latest = client.get_latest_version("users-value")
    assert (latest.schema_id, latest.version, latest.subject) == (1, 1, "users-value")
    assert json.loads(latest.schema.schema_str) == json.loads(V1)
    assert client.get_schema(1).schema_type == "AVRO"
    found = client.lookup_schema("users-value", Schema(V1, "AVRO"))
    assert (found.schema_id, found.version) == (1, 1)
    v2 = record("User", A, B_DEFAULT)
    assert client.register_schema("users-value", Schema(v2, "AVRO")) == 2
    assert client.get_versions("users-value") == [1, 2]
    assert client.get_version("users-value", 1).schema_id == 1


def test_missing_things_get_confluents_codes(client: SchemaRegistryClient) -> None:
    err = refused(client.get_latest_version, "nope-value")
    assert (err.http_status_code, err.error_code) == (404, 40401)
    assert err.error_message == "Subject 'nope-value' not found."
    client.register_schema("s", Schema(V1, "AVRO"))
    err = refused(client.get_version, "s", 7)
    assert (err.http_status_code, err.error_code, err.error_message) == (
        404,
        40402,
        "Version 7 not found.",
    )
    err = refused(client.get_schema, 99)
    assert (err.http_status_code, err.error_code, err.error_message) == (
        404,
        40403,
        "Schema 99 not found",
    )
    err = refused(client.lookup_schema, "s", Schema(record("Other", A), "AVRO"))
    assert (err.error_code, err.error_message) == (40403, "Schema not found")


def test_malformed_schema_is_42201(client: SchemaRegistryClient) -> None:
    err = refused(
        client.register_schema, "s", Schema(record("U", {"name": "a", "type": "nope"}), "AVRO")
    )
    assert (err.http_status_code, err.error_code) == (422, 42201)
    assert err.error_message.startswith("Invalid schema")
    assert "nope" in err.error_message
    err = refused(client.register_schema, "s", Schema("{not json", "AVRO"))
    assert err.error_code == 42201
    assert client.get_subjects() == []


def test_bad_version_and_level(
    client: SchemaRegistryClient, registry: SchemaRegistryServer
) -> None:
    client.register_schema("s", Schema(V1, "AVRO"))
    err = refused(client.get_version, "s", 0)
    assert (err.http_status_code, err.error_code) == (422, 42202)
    assert err.error_message == (
        "The specified version '0' is not a valid version id. "
        'Allowed values are between [1, 2^31-1] and the string "latest"'
    )
    err = refused(client.set_compatibility, "s", "SIDEWAYS")
    assert (err.http_status_code, err.error_code) == (422, 42203)
    assert err.error_message.startswith("Invalid compatibility level. Valid values are none, ")


def test_compatibility_levels(client: SchemaRegistryClient) -> None:
    assert client.get_compatibility() == "BACKWARD"
    client.register_schema("s", Schema(V1, "AVRO"))
    # BACKWARD: a new field needs a default (the new reader meets old records without it).
    err = refused(client.register_schema, "s", Schema(record("User", A, B_NO_DEFAULT), "AVRO"))
    assert (err.http_status_code, err.error_code) == (409, 409)
    assert err.error_message.startswith(
        'Schema being registered is incompatible with an earlier schema for subject "s", details: ['
    )
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in err.error_message
    assert "{compatibility: 'BACKWARD'}" in err.error_message
    assert client.test_compatibility("s", Schema(record("User", A, B_DEFAULT), "AVRO"))
    assert not client.test_compatibility("s", Schema(record("User", A, B_NO_DEFAULT), "AVRO"))
    # Promotion int -> long reads old data: BACKWARD yes, FORWARD no (long -> int is not).
    widened = Schema(record("User", {"name": "a", "type": "long"}), "AVRO")
    assert client.test_compatibility("s", widened)
    client.set_compatibility("s", "FORWARD")
    assert client.get_compatibility("s") == "FORWARD"
    assert not client.test_compatibility("s", widened)
    # FORWARD: dropping a field the old reader has no default for breaks old readers.
    client.register_schema("s", Schema(record("User", A, B_NO_DEFAULT), "AVRO"))
    assert not client.test_compatibility("s", Schema(record("User", A), "AVRO"))
    client.set_compatibility("s", "FULL")
    assert not client.test_compatibility(
        "s", Schema(record("User", A, B_DEFAULT, {"name": "c", "type": "int"}), "AVRO")
    )
    assert client.test_compatibility(
        "s",
        Schema(record("User", A, B_NO_DEFAULT, {"name": "c", "type": "int", "default": 0}), "AVRO"),
    )
    client.set_compatibility("s", "NONE")
    assert client.test_compatibility("s", Schema(json.dumps("string"), "AVRO"))
    assert client.get_compatibility() == "BACKWARD"  # the global level did not move


def test_transitive_checks_every_version(client: SchemaRegistryClient) -> None:
    client.set_compatibility(level="NONE")
    client.register_schema("s", Schema(record("User", A), "AVRO"))
    client.register_schema("s", Schema(record("User", {"name": "a", "type": "string"}), "AVRO"))
    # Reads v2 (string) data, not v1 (int): fine for BACKWARD, not BACKWARD_TRANSITIVE.
    candidate = Schema(record("User", {"name": "a", "type": "bytes"}), "AVRO")
    client.set_compatibility("s", "BACKWARD")
    assert client.test_compatibility_all_versions("s", candidate)
    client.set_compatibility("s", "BACKWARD_TRANSITIVE")
    assert not client.test_compatibility_all_versions("s", candidate)
    err = refused(client.register_schema, "s", candidate)
    assert "{oldSchemaVersion: 1}" in err.error_message


def test_enum_union_and_names(client: SchemaRegistryClient) -> None:
    def enum(*symbols: str) -> Schema:
        return Schema(json.dumps({"type": "enum", "name": "E", "symbols": list(symbols)}), "AVRO")

    client.register_schema("e", enum("A", "B"))
    assert "MISSING_ENUM_SYMBOLS" in refused(client.register_schema, "e", enum("A")).error_message
    assert client.register_schema("e", enum("A", "B", "C")) == 2
    client.register_schema("u", Schema(json.dumps(["null", "string"]), "AVRO"))
    assert not client.test_compatibility("u", Schema(json.dumps("string"), "AVRO"))
    assert client.test_compatibility("u", Schema(json.dumps(["null", "string", "int"]), "AVRO"))
    assert not client.test_compatibility(
        "e", Schema(json.dumps({"type": "enum", "name": "F", "symbols": ["A", "B", "C"]}), "AVRO")
    )


def test_delete_soft_then_permanent(client: SchemaRegistryClient) -> None:
    client.register_schema("s", Schema(V1, "AVRO"))
    err = refused(client.delete_subject, "s", True)
    assert (err.error_code, err.error_message) == (
        40405,
        "Subject 's' was not deleted first before being permanently deleted",
    )
    assert client.delete_subject("s") == [1]
    assert client.get_subjects() == []
    err = refused(client.delete_subject, "s")
    assert err.error_code == 40404
    assert client.delete_subject("s", permanent=True) == [1]
    assert refused(client.get_versions, "s").error_code == 40401


def test_delete_version(client: SchemaRegistryClient) -> None:
    client.register_schema("s", Schema(V1, "AVRO"))
    client.register_schema("s", Schema(record("User", A, B_DEFAULT), "AVRO"))
    assert client.delete_version("s", 2) == 2
    assert client.get_versions("s") == [1]
    assert refused(client.delete_version, "s", 2).error_code == 40406
    assert refused(client.delete_version, "s", 1, True).error_code == 40407
    assert client.delete_version("s", 2, True) == 2
    # A new version after a deleted one does not reuse its number.
    assert (
        client.register_schema(
            "s",
            Schema(
                record("User", A, B_DEFAULT, {"name": "c", "type": "int", "default": 1}), "AVRO"
            ),
        )
        == 3
    )


def test_references(client: SchemaRegistryClient) -> None:
    address = json.dumps(
        {
            "type": "record",
            "name": "Address",
            "namespace": "t",
            "fields": [{"name": "city", "type": "string"}],
        }
    )
    client.register_schema("address", Schema(address, "AVRO"))
    person = record("Person", {"name": "home", "type": "t.Address"})
    ref = SchemaReference("t.Address", "address", 1)
    schema_id = client.register_schema("person", Schema(person, "AVRO", [ref]))
    fetched = client.get_schema(schema_id)
    assert [(r.name, r.subject, r.version) for r in fetched.references] == [
        ("t.Address", "address", 1)
    ]
    # Without the reference the name is unknown: a malformed schema.
    assert refused(client.register_schema, "person2", Schema(person, "AVRO")).error_code == 42201
    missing = SchemaReference("t.Address", "address", 5)
    assert (
        refused(client.register_schema, "person3", Schema(person, "AVRO", [missing])).error_code
        == 42201
    )


def test_subject_config(client: SchemaRegistryClient) -> None:
    client.register_schema("s", Schema(V1, "AVRO"))
    err = refused(client.get_compatibility, "s")
    assert (err.error_code, err.error_message) == (
        40408,
        "Subject 's' does not have subject-level compatibility configured",
    )
    client.set_compatibility(level="FULL_TRANSITIVE")
    assert client.get_compatibility() == "FULL_TRANSITIVE"


def test_lookup_sees_soft_deleted_versions_only_when_asked() -> None:
    """Confluent's POST /subjects/{s}?deleted=: a soft-deleted subject is not found, unless
    deleted=true, which finds its versions too; another schema is 40403 either way."""
    from kafkatest.schema_registry.errors import RegistryError
    from kafkatest.schema_registry.state import SchemaRegistry

    state = SchemaRegistry()
    v1 = state.make_schema(V1)
    state.register("s", v1)
    state.register("s", state.make_schema(record("User", A, B_DEFAULT)))
    state.delete_version("s", 1)
    assert state.lookup("s", v1, deleted=True).version == 1
    with pytest.raises(RegistryError) as info:
        state.lookup("s", v1)
    assert info.value.error_code == 40403
    state.delete_subject("s")
    with pytest.raises(RegistryError) as info:
        state.lookup("s", v1)
    assert info.value.error_code == 40401
    assert state.lookup("s", v1, deleted=True).version == 1
    with pytest.raises(RegistryError) as info:
        state.lookup("s", state.make_schema(record("Other", A)), deleted=True)
    assert info.value.error_code == 40403
