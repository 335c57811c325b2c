"""Every option kafkatest reads, declared once, and the one frozen `Config` made of them.

A setting can come from a pytest flag, a ``KAFKATEST_*`` environment variable, an ini
key, or its default; `OPTIONS` declares, for each, which of these exist, its type, its
default and its help. `Config.build` resolves them all with one precedence rule,
**flag > environment > ini > default**, and remembers where each value came from (for
messages that name the place to change it). The pytest plugin builds the `Config` from
pytest's options and ini file (`kafkatest.plugin.options`), the ``kafkatest`` command
from the environment; both add their flags from this table, and the docs' reference
pages (options, ini keys, environment) are generated from it.

Modules below the plugin that read a variable where it is used (where the jars are
cached, which Kafka release) call `environment`, which refuses a variable not declared
here: the table stays the one list of what kafkatest reads. This module imports nothing
of kafkatest, so every layer may use it (pytest-postgresql's ``config.py`` is the
model).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal, overload

#: How a value is read from text (the environment, an ini line) and what it becomes:
#: text -> str, int -> int, list -> tuple of the comma-separated items, lines -> tuple of
#: ini lines (a flag given several times, an ini linelist).
Kind = Literal["text", "int", "list", "lines"]


@dataclass(frozen=True)
class Option:
    """One setting and every place it may be given."""

    name: str
    help: str
    flag: str | None = None
    ini: str | None = None
    env: str | None = None
    default: object = None
    kind: Kind = "text"
    #: The flag may be repeated (argparse ``append``).
    repeat: bool = False
    #: Set by kafkatest for its own child processes, never by a user (not documented).
    internal: bool = False

    def where(self) -> str:
        """The other places it may be given, as the help texts say them."""
        places = [f"ini: {self.ini}"] if self.ini else []
        places += [f"env {self.env}"] if self.env else []
        return f" ({'; '.join(places)})" if places and self.flag else ""


OPTIONS: tuple[Option, ...] = (
    # -- the broker ---------------------------------------------------------------------
    Option(
        "backend",
        "broker(s) to run tests against: one of emulator, kafka, container, external, or "
        "several joined by commas to run every broker test on each (default: emulator)",
        flag="--kafka-backend",
        env="KAFKATEST_BACKEND",
        default="emulator",
    ),
    Option(
        "emulator_brokers",
        "broker ids the emulator serves, each on its own port, leaders spread (default 1)",
        flag="--emulator-brokers",
        default=1,
        kind="int",
    ),
    Option(
        "advertised_host",
        "address the emulator and kafka backends listen on and advertise (default "
        "127.0.0.1): one that executors of a Spark cluster on other machines can reach. "
        "The brokers have no authentication unless asked for: only on a trusted network",
        flag="--kafka-advertised-host",
    ),
    Option(
        "kafka_brokers",
        "brokers of the kafka backend: N > 1 runs an N-node KRaft cluster with a "
        "dedicated controller (default 1: one combined node)",
        flag="--kafka-brokers",
        default=1,
        kind="int",
    ),
    Option(
        "broker_config",
        "Kafka broker properties (name=value, one a line) for every broker the run starts",
        ini="kafka_broker_config",
        default=(),
        kind="lines",
    ),
    Option(
        "bootstrap",
        "host:port of an existing cluster, for --kafka-backend=external",
        flag="--kafka-bootstrap",
    ),
    # -- security -------------------------------------------------------------------------
    Option(
        "security",
        "the session broker's listener: PLAINTEXT (default), SSL, SASL_PLAINTEXT or "
        "SASL_SSL. Tests reach it with kafka_broker.client_config(user) and "
        "kafka_broker.spark_options(user)",
        flag="--kafka-security",
        ini="kafka_security",
        env="KAFKATEST_SECURITY",
        default="PLAINTEXT",
    ),
    Option(
        "sasl_mechanisms",
        "SASL mechanism(s) of a SASL listener, comma-separated: PLAIN, SCRAM-SHA-256, "
        "SCRAM-SHA-512 (default PLAIN)",
        flag="--kafka-sasl-mechanism",
        ini="kafka_sasl_mechanisms",
    ),
    Option(
        "users",
        "NAME:PASSWORD of a user of a SASL listener (repeatable)",
        flag="--kafka-user",
        ini="kafka_users",
        default=(),
        kind="lines",
        repeat=True,
    ),
    # -- Spark ------------------------------------------------------------------------------
    Option(
        "spark_remote",
        "run the spark fixture over Spark Connect: 'local' (a local Connect server with "
        "the connector) or sc://host:port; default: the warm server of `kafkatest "
        "spark-server start` if one runs, 'off' to ignore it",
        flag="--spark-remote",
        ini="spark_remote",
        env="KAFKATEST_SPARK_REMOTE",
        default="",
    ),
    Option(
        "spark_master",
        "the spark fixture's master: local[N] (default local[2]), local-cluster[W,C,M] "
        "(executors in their own JVMs), spark://host:port, or standalone[W] (kafkatest "
        "starts a master and W workers from the installed PySpark)",
        flag="--spark-master",
        ini="spark_master",
        env="KAFKATEST_SPARK_MASTER",
        default="local[2]",
    ),
    Option(
        "spark_extras",
        "Spark modules the spark fixture attaches next to the connector: avro, protobuf "
        "(for from_avro / from_protobuf)",
        ini="spark_extras",
        env="KAFKATEST_SPARK_EXTRAS",
        default=(),
        kind="list",
    ),
    Option(
        "log_level",
        "what Spark prints on the console: ERROR (default), WARN, INFO, DEBUG; the full "
        "log goes to a file named in failing tests' reports",
        flag="--kafka-log-level",
        env="KAFKATEST_LOG_LEVEL",
        default="ERROR",
    ),
    Option(
        "spark_log_level",
        "Spark's own log level (wins over `KAFKATEST_LOG_LEVEL` for Spark)",
        env="KAFKATEST_SPARK_LOG_LEVEL",
    ),
    Option(
        "spark_cds",
        "the Spark driver JVM's class-data-sharing archive: `auto` (default: written by "
        "the first session start, in the cache directory, and mapped by every later one; "
        "a cold start in about half the time), `off`, or a directory to keep it in",
        env="KAFKATEST_SPARK_CDS",
    ),
    Option(
        "kafka_cds",
        "the class-data-sharing archives of the JVMs kafkatest starts for Kafka (its "
        "broker, and its tools): `auto` (default: written by the first run of each, in "
        "the cache directory, and mapped by every later one; a tool runs in about half "
        "the time, a broker starts about 2 s sooner), `off`, or a directory to keep them in",
        env="KAFKATEST_KAFKA_CDS",
    ),
    Option(
        "spark_server",
        "`auto`: the first Spark test of a run starts the warm Spark Connect server of "
        "`kafkatest spark-server start` when none runs, and every later run uses it; it "
        "stops itself once unused for `spark_server_idle_minutes` (PySpark 4.0+, whose "
        "server refuses clients without its key); empty (default): only when started by hand",
        ini="spark_server",
        env="KAFKATEST_SPARK_SERVER",
        default="",
    ),
    Option(
        "spark_server_idle_minutes",
        "minutes without a run after which a warm server started by `spark_server = auto` "
        "stops itself (default 30)",
        ini="spark_server_idle_minutes",
        env="KAFKATEST_SPARK_SERVER_IDLE_MINUTES",
        default="30",
    ),
    Option(
        "pytest_server_preload",
        "modules `kafkatest pytest`'s fork server imports once for every run, besides "
        "pytest, its plugins, PySpark's Connect client and kafkatest (your job's heavy "
        "libraries; never the modules under test, which each run imports anew)",
        ini="pytest_server_preload",
        env="KAFKATEST_PYTEST_SERVER_PRELOAD",
        default=(),
        kind="list",
    ),
    Option(
        "pytest_server_idle_minutes",
        "minutes without a run after which the fork server of `kafkatest pytest` stops "
        "itself (default 30)",
        ini="pytest_server_idle_minutes",
        env="KAFKATEST_PYTEST_SERVER_IDLE_MINUTES",
        default="30",
    ),
    Option(
        "spark_server_state",
        "where `kafkatest spark-server` records the warm server (default: in the cache directory)",
        env="KAFKATEST_SPARK_SERVER_STATE",
    ),
    Option(
        "reports",
        "directory for the reports of failed delivery assertions (default kafkatest-reports)",
        flag="--kafkatest-reports",
    ),
    # -- jars -------------------------------------------------------------------------------
    Option(
        "cache_dir",
        "where jars and manifests are cached (default `~/.cache/kafkatest`)",
        env="KAFKATEST_CACHE_DIR",
    ),
    Option(
        "spark_jars_dir",
        "use the connector jars in this directory instead of resolving them "
        "(`KAFKATEST_JARS_DIR` is the older name)",
        env="KAFKATEST_SPARK_JARS_DIR",
    ),
    Option("jars_dir", "older name of KAFKATEST_SPARK_JARS_DIR", env="KAFKATEST_JARS_DIR"),
    Option(
        "spark_jars",
        "`resolve` (default), `packages` (Spark resolves the connector itself through "
        "`spark.jars.packages`) or `none`",
        env="KAFKATEST_SPARK_JARS",
    ),
    Option(
        "connector_version",
        "connector version to use instead of the installed PySpark's",
        env="KAFKATEST_CONNECTOR_VERSION",
    ),
    Option(
        "kafka_version",
        "Apache Kafka release for the `kafka` backend (default 4.3.1)",
        env="KAFKATEST_KAFKA_VERSION",
    ),
    Option(
        "kafka_jars_dir", "use the broker jars in this directory", env="KAFKATEST_KAFKA_JARS_DIR"
    ),
    Option(
        "jvm_flags",
        "flags for the JVMs kafkatest starts for tests (the kafka backend's brokers, "
        "Spark's driver, Kafka's tools); default `-XX:TieredStopAtLevel=1 "
        "-XX:+UseSerialGC`, which start a short-lived JVM in about half the time and "
        "change nothing a test observes; set it empty for the JVM's own defaults",
        env="KAFKATEST_JVM_FLAGS",
    ),
    Option("maven_repo_url", "another Maven repository or mirror", env="KAFKATEST_MAVEN_REPO_URL"),
    Option("maven_settings", "your own Maven `settings.xml`", env="KAFKATEST_MAVEN_SETTINGS"),
    # -- the kafkatest command ------------------------------------------------------------
    Option(
        "control",
        "`host:port` of a standalone emulator's control interface, for `kafkatest fault`",
        env="KAFKATEST_CONTROL",
    ),
    Option(
        "client_config",
        "a child process's client configuration, as JSON",
        env="KAFKATEST_CLIENT_CONFIG",
        internal=True,
    ),
)

BY_NAME: Mapping[str, Option] = MappingProxyType({option.name: option for option in OPTIONS})
BY_FLAG: Mapping[str, Option] = MappingProxyType(
    {option.flag: option for option in OPTIONS if option.flag}
)
BY_ENV: Mapping[str, Option] = MappingProxyType(
    {option.env: option for option in OPTIONS if option.env}
)


@overload
def environment(variable: str) -> str | None: ...
@overload
def environment(variable: str, default: str) -> str: ...
def environment(variable: str, default: str | None = None) -> str | None:
    """``os.environ.get(variable, default)`` for a variable declared in `OPTIONS`.

    For modules that read a variable where they use it (it may change between two
    calls, as tests do); an undeclared name is a bug, refused at once.
    """
    if variable not in BY_ENV:
        raise KeyError(f"{variable} is not declared in kafkatest.config.OPTIONS")
    return os.environ.get(variable, default)


def parse(option: Option, raw: object) -> object:
    """A value as given (text from the environment, a list from pytest) as its kind."""
    if option.kind == "int":
        return raw if isinstance(raw, int) else int(str(raw).strip())
    if option.kind in ("list", "lines"):
        if isinstance(raw, str):
            separator = "," if option.kind == "list" else "\n"
            return tuple(item.strip() for item in raw.split(separator) if item.strip())
        return tuple(str(item) for item in raw)  # type: ignore[attr-defined]
    return str(raw)


def _given(raw: object) -> bool:
    """Whether a source gives a value: None, "" and an empty list say nothing."""
    return raw is not None and raw != "" and raw != [] and raw != ()


@dataclass(frozen=True)
class Config:
    """Every setting's value and the place it came from (flag, variable, ini key, default)."""

    values: Mapping[str, object] = field(default_factory=dict)
    origins: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        flags: Mapping[str, object] | None = None,
        ini: Mapping[str, object] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Config:
        """Resolve every option: flag > environment > ini > default.

        `flags` is keyed by flag (``--kafka-backend``), `ini` by ini key, `environ`
        defaults to ``os.environ``. A value that does not parse names its place.
        """
        flags, ini = flags or {}, ini or {}
        environ = os.environ if environ is None else environ
        values: dict[str, object] = {}
        origins: dict[str, str] = {}
        for option in OPTIONS:
            candidates = (
                (option.flag, flags.get(option.flag) if option.flag else None),
                (option.env, environ.get(option.env) if option.env else None),
                (f"ini {option.ini}", ini.get(option.ini) if option.ini else None),
            )
            for place, raw in candidates:
                if place and _given(raw):
                    try:
                        values[option.name] = parse(option, raw)
                    except ValueError:
                        raise ValueError(f"{place}={raw!r}: expected a whole number") from None
                    origins[option.name] = place
                    break
            else:
                values[option.name] = option.default
                origins[option.name] = "default"
        return cls(MappingProxyType(values), MappingProxyType(origins))

    def __getitem__(self, name: str) -> object:
        return self.values[name] if name in self.values else BY_NAME[name].default

    def text(self, name: str) -> str:
        value = self[name]
        return "" if value is None else str(value)

    def number(self, name: str) -> int:
        return int(self[name])  # type: ignore[call-overload]

    def items(self, name: str) -> tuple[str, ...]:
        return tuple(self[name] or ())  # type: ignore[arg-type]

    def given(self, name: str) -> bool:
        """Whether a flag, variable or ini key set it (not its default)."""
        return self.origins.get(name, "default") != "default"


#: JVM flags for the test JVMs kafkatest starts, unless ``KAFKATEST_JVM_FLAGS`` says
#: otherwise: the client compiler only (C2's compilations cost a short-lived JVM more
#: than they return) and the serial collector (no GC threads fighting for 2 cores).
#: Measured here: a kafka backend broker starts in 4.6-4.9 s instead of 6.6-9.4 s.
QUICK_START_JVM_FLAGS: tuple[str, ...] = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


def jvm_flags_for_tests() -> tuple[str, ...]:
    """The flags a test JVM gets: ``KAFKATEST_JVM_FLAGS`` when set (even empty), else
    `QUICK_START_JVM_FLAGS`."""
    import shlex

    given = os.environ.get("KAFKATEST_JVM_FLAGS")
    return QUICK_START_JVM_FLAGS if given is None else tuple(shlex.split(given))


def cache_dir() -> Path:
    """Per-user cache: $KAFKATEST_CACHE_DIR, else $XDG_CACHE_HOME/kafkatest, else ~/.cache."""
    explicit = environment("KAFKATEST_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafkatest"


def project_ini(start: Path | None = None) -> dict[str, object]:
    """The pytest ini options of the project around `start` (default: the working
    directory), for commands run outside pytest (``kafkatest spark-server start``) that
    must honour what the project's ini says, as its pytest runs do.

    Found as pytest finds its ini file, nearest directory first: ``pytest.ini``, then
    ``pyproject.toml`` with ``[tool.pytest.ini_options]``, ``tox.ini`` with ``[pytest]``,
    ``setup.cfg`` with ``[tool:pytest]``. Nothing found: an empty dict.
    """
    import configparser
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - pytest brings tomli below 3.11
        import tomli as tomllib

    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        for name, section in (
            ("pytest.ini", "pytest"),
            ("pyproject.toml", None),
            ("tox.ini", "pytest"),
            ("setup.cfg", "tool:pytest"),
        ):
            path = directory / name
            if not path.is_file():
                continue
            if section is None:
                table = tomllib.loads(path.read_text()).get("tool", {}).get("pytest", {})
                if "ini_options" in table:
                    return dict(table["ini_options"])
                continue
            parser = configparser.ConfigParser(interpolation=None)
            parser.read(path)
            if parser.has_section(section):
                return dict(parser.items(section))
    return {}
