"""Fixture files and faker-based generators as seed sources."""

from __future__ import annotations

import json

import pytest

from kafkatest.seeding import fake_values, load_fixture, seed

SCHEMA = {
    "id": "seq",
    "ref": "uuid4",
    "user": "user_name",
    "email": "email",
    "amount": ("pyint", {"min_value": 1, "max_value": 9}),
    "placed": "date_time_this_year",
}


def test_fake_values_are_the_same_for_the_same_seed_and_differ_otherwise():
    assert fake_values(SCHEMA, 50, seed=7) == fake_values(SCHEMA, 50, seed=7)
    assert fake_values(SCHEMA, 50, seed=7) != fake_values(SCHEMA, 50, seed=8)


def test_fake_values_follow_the_schema_and_are_json():
    values = fake_values(SCHEMA, 200, seed=1)
    assert [v["id"] for v in values] == list(range(200))
    assert len({v["ref"] for v in values}) == 200
    assert all(1 <= v["amount"] <= 9 for v in values)
    assert all("@" in v["email"] for v in values)
    json.dumps(values)  # dates came out as text


def test_callables_are_called_per_record():
    values = fake_values({"word": lambda faker: faker.word().upper()}, 3, seed=1)
    assert all(v["word"].isupper() for v in values)


def test_unknown_provider_is_named():
    with pytest.raises(ValueError, match="field 'x': faker has no provider 'no_such_thing'"):
        fake_values({"x": "no_such_thing"}, 1)


def test_generated_values_seed_keyed_by_a_field(memory_log):
    values = fake_values(SCHEMA, 100, seed=3)
    result = seed(memory_log, "t", values, key_field="user", id_field="id")
    assert result.ids == tuple(str(i) for i in range(100))
    partition_of_user: dict[bytes, set[int]] = {}
    for record, value in zip(result.records, values, strict=True):
        assert record.key == value["user"].encode()
        partition_of_user.setdefault(record.key, set()).add(record.partition)
    assert all(len(partitions) == 1 for partitions in partition_of_user.values())


def test_fixture_formats_by_suffix(tmp_path):
    (tmp_path / "a.json").write_text('[{"value": 1}]')
    (tmp_path / "b.ndjson").write_text('{"x": 1}\n\n{"x": 2}\n')
    assert load_fixture(tmp_path / "a.json") == [{"value": 1}]
    assert load_fixture(tmp_path / "b.ndjson") == [{"x": 1}, {"x": 2}]


def test_fixture_errors_point_at_the_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"x": 1}\n{oops\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:2: not JSON"):
        load_fixture(bad)
    (tmp_path / "m.yaml").write_text("a: 1\n")
    with pytest.raises(ValueError, match="expected a list of entries"):
        load_fixture(tmp_path / "m.yaml")
    with pytest.raises(ValueError, match="fixture files end in one of"):
        load_fixture(tmp_path / "x.txt")


def test_fake_dates_count_from_a_fixed_now_so_runs_at_different_times_agree(monkeypatch):
    import datetime as dt

    import faker.providers.date_time as faker_date_time

    schema = {"placed": "date_time_this_year", "born": "past_date"}
    first = fake_values(schema, 20, seed=5)

    class Later(dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return dt.datetime(2031, 6, 1, 8, 30, tzinfo=tz)

    # The wall clock moves on (years, not seconds): the values must not.
    monkeypatch.setattr(faker_date_time, "datetime", Later)
    assert fake_values(schema, 20, seed=5) == first
    assert faker_date_time.datetime is Later  # the real clock is handed back afterwards
    assert all(v["placed"].startswith("2025-") for v in first)
    later = fake_values(schema, 20, seed=5, now=dt.datetime(2030, 3, 1))
    assert all(v["placed"].startswith("2030-") for v in later)
