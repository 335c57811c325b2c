"""The Confluent Schema Registry REST subset clients use, routed onto `SchemaRegistry`.

Sans-IO: `handle` takes (method, path with query, body) and answers (status, JSON), so
tests and the HTTP layer share one router. Paths and answers follow Confluent's API
reference; anything else is Confluent's ``{"error_code": 404, "message": "HTTP 404 Not Found"}``.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from kafkatest.schema_registry import errors
from kafkatest.schema_registry.errors import RegistryError
from kafkatest.schema_registry.state import SchemaRegistry, parse_version, schema_json

log = logging.getLogger("kafkatest.schema_registry")

NOT_FOUND = RegistryError(404, 404, "HTTP 404 Not Found")
NOT_ALLOWED = RegistryError(405, 405, "HTTP 405 Method Not Allowed")


def _flag(query: dict[str, list[str]], name: str) -> bool:
    # Jersey reads booleans case-insensitively; confluent-kafka sends "True"/"False".
    return query.get(name, ["false"])[-1].lower() == "true"


def _body(raw: bytes) -> dict[str, Any]:
    try:
        document = json.loads(raw or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise RegistryError(400, 400, f"Unrecognized JSON body: {exc}") from None
    if not isinstance(document, dict):
        raise errors.unprocessable("The request body must be a JSON object")
    return document


def _schema_id(text: str) -> int:
    if not text.isdigit() or int(text) > 2**31 - 1:
        raise NOT_FOUND
    return int(text)


class RestApi:
    def __init__(self, registry: SchemaRegistry) -> None:
        self.registry = registry

    def handle(self, method: str, target: str, body: bytes) -> tuple[int, Any]:
        """(status, JSON-able answer) for one request; never raises."""
        url = urlsplit(target)
        parts = [unquote(p) for p in url.path.split("/") if p]
        query = parse_qs(url.query)
        try:
            return 200, self._route(method, parts, query, body)
        except RegistryError as exc:
            return exc.status, exc.to_json()
        except Exception as exc:
            log.exception("schema registry request %s %s failed", method, target)
            return 500, {"error_code": 50001, "message": f"{type(exc).__name__}: {exc}"}

    def _route(self, method: str, p: list[str], query: dict[str, list[str]], body: bytes) -> Any:
        r = self.registry
        deleted = _flag(query, "deleted")
        if not p:
            return {}
        head, n = p[0], len(p)
        if head == "subjects":
            if n == 1 and method == "GET":
                return r.subjects(deleted, query.get("subjectPrefix", [""])[-1])
            if n == 1:
                raise NOT_ALLOWED
            subject = p[1]
            if n == 2:
                if method == "POST":
                    schema = self._schema_from(body)
                    return r.lookup(subject, schema, deleted).to_json()
                if method == "DELETE":
                    return r.delete_subject(subject, _flag(query, "permanent"))
                raise NOT_ALLOWED
            if p[2] != "versions" or n > 5:
                raise NOT_FOUND
            if n == 3:
                if method == "GET":
                    return r.versions(subject, deleted)
                if method == "POST":
                    registered = r.register(subject, self._schema_from(body))
                    return {"id": registered.schema_id}
                raise NOT_ALLOWED
            if n == 5 and p[4] == "referencedby" and method == "GET":
                return []
            if n == 4 and method == "DELETE":
                return r.delete_version(subject, p[3], _flag(query, "permanent"))
            if method != "GET":
                raise NOT_ALLOWED
            found = r.version(subject, p[3], deleted)
            if n == 4:
                return found.to_json()
            if p[4] == "schema":
                return _raw(found.schema.text)
            raise NOT_FOUND
        if head == "schemas":
            if n == 2 and p[1] == "types" and method == "GET":
                return list(("JSON", "PROTOBUF", "AVRO"))
            if n < 3 or p[1] != "ids" or n > 4:
                raise NOT_FOUND
            if method != "GET":
                raise NOT_ALLOWED
            schema_id = _schema_id(p[2])
            schema = r.schema(schema_id)
            if n == 3:
                return schema_json(schema)
            if p[3] == "schema":
                return _raw(schema.text)
            if p[3] == "subjects":
                return sorted({s for s, _ in r.subject_versions_of(schema_id, deleted)})
            if p[3] == "versions":
                return [
                    {"subject": s, "version": v}
                    for s, v in r.subject_versions_of(schema_id, deleted)
                ]
            raise NOT_FOUND
        if head == "config" and n <= 2:
            config_subject = p[1] if n == 2 else None
            if method == "GET":
                level = r.compatibility(config_subject, n == 1 or _flag(query, "defaultToGlobal"))
                return {"compatibilityLevel": level}
            if method == "PUT":
                level = r.set_compatibility(_body(body).get("compatibility"), config_subject)
                return {"compatibility": level}
            if method == "DELETE":
                return {"compatibilityLevel": r.delete_compatibility(config_subject)}
            raise NOT_ALLOWED
        if head == "compatibility" and n in (4, 5) and p[1] == "subjects" and p[3] == "versions":
            if method != "POST":
                raise NOT_ALLOWED
            schema = self._schema_from(body)
            version = p[4] if n == 5 else None
            if version is not None:
                parse_version(version)
            subject = p[2]
            if version is not None or r.subjects(deleted=False).count(subject):
                problems = r.test_compatibility(subject, schema, version)
            else:
                problems = []
            answer: dict[str, Any] = {"is_compatible": not problems}
            if _flag(query, "verbose"):
                answer["messages"] = problems
            return answer
        if head == "mode" and method == "GET" and n <= 2:
            return {"mode": "READWRITE"}
        raise NOT_FOUND

    def _schema_from(self, body: bytes) -> Any:
        request = _body(body)
        return self.registry.make_schema(
            request.get("schema"), request.get("schemaType"), request.get("references")
        )


class _Raw(str):
    """A schema text answered as itself (GET .../schema), not as a JSON string."""


def _raw(text: str) -> _Raw:
    return _Raw(text)


def encode(answer: Any) -> bytes:
    if isinstance(answer, _Raw):
        return answer.encode()
    return json.dumps(answer).encode()
