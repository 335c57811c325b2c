"""One table of options (kafkatest.config.OPTIONS) and one precedence rule:
flag > environment > ini > default, for the plugin and the kafkatest command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafkatest.brokers.registry import BACKENDS
from kafkatest.config import BY_NAME, OPTIONS, Config, environment

ROOT = Path(__file__).resolve().parent.parent


def test_a_flag_beats_the_environment_which_beats_the_ini_file_which_beats_the_default() -> None:
    flags = {"--spark-master": "local[4]"}
    ini = {"spark_master": "local[3]", "kafka_security": "SSL"}
    environ = {"KAFKATEST_SPARK_MASTER": "local[1]", "KAFKATEST_SECURITY": "SASL_SSL"}
    config = Config.build(flags, ini, environ)
    assert (config.spark_master, config.origins["spark_master"]) == (
        "local[4]",
        "--spark-master",
    )
    assert (config.security, config.origins["security"]) == ("SASL_SSL", "KAFKATEST_SECURITY")
    config = Config.build({}, ini, {})
    assert (config.security, config.origins["security"]) == ("SSL", "ini kafka_security")
    config = Config.build({}, {}, {})
    assert config.spark_master == "local[2]" and not config.given("spark_master")
    assert config.emulator_brokers == 1 and config.users == ()


def test_values_are_parsed_by_kind_and_a_bad_one_names_its_place() -> None:
    config = Config.build(
        {"--kafka-user": ["a:b", "c:d"]}, {}, {"KAFKATEST_SPARK_EXTRAS": "avro, protobuf"}
    )
    assert config.users == ("a:b", "c:d")
    assert config.spark_extras == ("avro", "protobuf")
    with pytest.raises(
        ValueError, match=r"emulator_brokers = 'x' \(--emulator-brokers\): expected a whole number"
    ):
        Config.build({"--emulator-brokers": "x"}, {}, {})


def test_every_variable_kafkatest_reads_is_declared_once() -> None:
    source = "\n".join(path.read_text() for path in (ROOT / "kafkatest").rglob("*.py"))
    read = set(re.findall(r"environ(?:\.get)?[\[(]\s*\"(KAFKATEST_[A-Z_]+)\"", source))
    read |= set(re.findall(r"environment\(\s*\"(KAFKATEST_[A-Z_]+)\"", source))
    declared = {option.env for option in OPTIONS if option.env}
    assert read <= declared, sorted(read - declared)
    assert len(declared) == len([option for option in OPTIONS if option.env])
    with pytest.raises(KeyError, match="not declared"):
        environment("KAFKATEST_NO_SUCH_THING")


def test_the_plugin_adds_every_flag_and_ini_key_of_the_table(pytestconfig: pytest.Config) -> None:
    for option in OPTIONS:
        if option.flag:
            pytestconfig.getoption(option.flag)  # raises for an undeclared flag
        if option.ini:
            pytestconfig.getini(option.ini)
    for name in BACKENDS:  # the help names every backend
        assert name in BY_NAME["backend"].help


@pytest.mark.parametrize("name", ["spark_server_idle_minutes", "pytest_server_idle_minutes"])
def test_every_idle_time_is_one_kind_of_minutes_with_one_bound(name: str) -> None:
    """Both idle times are `minutes` options: the same parsing and the same bounds."""
    env = BY_NAME[name].env
    assert env is not None and BY_NAME[name].kind == "minutes"
    assert getattr(Config.build({}, {}, {env: "0.5"}), name) == 0.5
    assert getattr(Config.build({}, {}, {}), name) == 30.0
    for bad in ("never", "0", "-1", str(7 * 24 * 60 + 1)):
        with pytest.raises(ValueError, match=rf"{name} = '{bad}' \({env}\): give the minutes"):
            Config.build({}, {}, {env: bad})


def test_options_are_typed_attributes_of_the_config() -> None:
    """Each option is a `Config` field (so mypy refuses a misspelt one) and the table
    is derived from those fields: one declaration."""
    from dataclasses import fields

    declared = [f.name for f in fields(Config) if f.name != "origins"]
    assert declared == [option.name for option in OPTIONS]
    config = Config.build({"--kafka-brokers": "3"}, {}, {})
    assert config.kafka_brokers == 3 and config.origins["kafka_brokers"] == "--kafka-brokers"
    with pytest.raises(AttributeError):
        config.kafka_broker  # type: ignore[attr-defined]  # noqa: B018


def test_a_bad_value_is_a_setup_error_and_breaks_no_unrelated_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`kafkatest` prints a `SetupError` as one line (no traceback); building its
    parser reads no option, so a bad idle time breaks only what reads it."""
    from kafkatest.cli import build_parser
    from kafkatest.errors import SetupError

    monkeypatch.setenv("KAFKATEST_PYTEST_SERVER_IDLE_MINUTES", "soon")
    with pytest.raises(SetupError, match="pytest_server_idle_minutes = 'soon'"):
        Config.build()
    build_parser()
