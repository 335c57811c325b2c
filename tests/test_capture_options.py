"""`kafkatest capture` refuses bad options with a message that names them, before it
connects anywhere; anonymization is stable for one salt and differs across salts."""

from __future__ import annotations

import pytest

from kafkatest.capture.anonymize import Anonymizer, parse_rule
from kafkatest.capture.ranges import CaptureError, per_partition, time_ms
from kafkatest.cli import main


def test_a_rule_must_be_field_equals_a_known_rule() -> None:
    for spec, words in [
        ("email", "FIELD=RULE"),
        ("email=scramble", "hash, drop, keep"),
        ("email=fake:", "needs a provider"),
        ("email=fake:no_such_provider", "no provider 'no_such_provider'"),
    ]:
        with pytest.raises(ValueError, match=words):
            parse_rule(spec)
    assert parse_rule("header:user=hash").field == "header:user"
    assert parse_rule("key.id=drop").field == "key.id"


def test_the_same_salt_gives_the_same_replacement() -> None:
    rules = [parse_rule("email=hash"), parse_rule("name=fake:name"), parse_rule("ssn=drop")]
    one, two = Anonymizer(rules, b"a"), Anonymizer(rules, b"a")
    value = {"email": "ann@example.com", "name": "Ann", "ssn": "1", "n": 3}
    first = one.apply(dict(value), "value")
    assert first == two.apply(dict(value), "value")
    assert "ssn" not in first and first["n"] == 3 and first["email"] != value["email"]
    assert Anonymizer(rules, b"b").apply(dict(value), "value")["email"] != first["email"]


def test_offsets_and_times_in_a_bad_form_are_refused() -> None:
    partitions = [("t", 0), ("t", 1)]
    assert per_partition('{"1": 5}', "--from", partitions) == {("t", 1): 5}
    with pytest.raises(CaptureError, match="no such topic or partition: 7"):
        per_partition('{"7": 5}', "--from", partitions)
    with pytest.raises(CaptureError, match="latest-N or JSON"):
        per_partition("yesterday", "--from", partitions)
    assert time_ms("1970-01-01T00:00:01") == 1000
    with pytest.raises(CaptureError, match="not a time"):
        time_ms("noon")


def test_the_command_needs_an_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capture", "--bootstrap", "localhost:1", "--topic", "t"]) == 2
    assert "give -o FILE" in capsys.readouterr().err
