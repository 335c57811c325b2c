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
here: the table stays the one list of what kafkatest reads. This module imports only the
ground modules `errors` and `security_names`, so every layer may use it (pytest-postgresql's
``config.py`` is the model).

Each option is a typed attribute of `Config` (``settings.spark_server``), so a misspelt
name is a type error, not a lookup that fails at run time; `OPTIONS` is derived from
those declarations.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Literal, overload

from kafkatest.errors import SetupError
from kafkatest.security_names import MECHANISMS, PROTOCOLS

#: How a value is read from text (the environment, an ini line) and what it becomes:
#: text -> str, int -> int, list -> tuple of the comma-separated items, lines -> tuple of
#: ini lines (a flag given several times, an ini linelist), minutes -> float, more than 0
#: and at most a week (every idle time kafkatest takes is this one kind).
Kind = Literal["text", "int", "list", "lines", "minutes"]
#: The longest idle time a `minutes` option takes: a week.
MAX_MINUTES = 7 * 24 * 60


class ConfigError(SetupError, ValueError):
    """A value given for an option does not parse; the message names where it was given."""


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


_KIND_OF_DEFAULT: dict[type, Kind] = {int: "int", float: "minutes", tuple: "list"}


def option(
    help: str,
    *,
    flag: str | None = None,
    ini: str | None = None,
    env: str | None = None,
    default: Any = "",
    kind: Kind | None = None,
    repeat: bool = False,
    internal: bool = False,
) -> Any:
    """A `Config` attribute declared as an option; its kind follows from its default
    (int, float: minutes, tuple: a comma-separated list) unless given."""
    kind = kind or _KIND_OF_DEFAULT.get(type(default), "text")
    declared = Option("", help, flag, ini, env, default, kind, repeat, internal)
    return field(default=default, metadata={"option": declared})


@dataclass(frozen=True)
class Config:
    """Every setting's value, as a typed attribute, and the place it came from (flag,
    variable, ini key, default) in `origins`."""

    # -- the broker ---------------------------------------------------------------------
    backend: str = option(
        "broker(s) to run tests against: one of emulator, kafka, container, external, or "
        "several joined by commas to run every broker test on each (default: emulator)",
        flag="--kafka-backend",
        env="KAFKATEST_BACKEND",
        default="emulator",
    )
    emulator_brokers: int = option(
        "broker ids the emulator serves, each on its own port, leaders spread (default 1)",
        flag="--emulator-brokers",
        default=1,
    )
    advertised_host: str = option(
        "address the emulator and kafka backends listen on and advertise (default "
        "127.0.0.1): one that executors of a Spark cluster on other machines can reach. "
        "The brokers have no authentication unless asked for: only on a trusted network",
        flag="--kafka-advertised-host",
    )
    kafka_brokers: int = option(
        "brokers of the kafka backend: N > 1 runs an N-node KRaft cluster with a "
        "dedicated controller (default 1: one combined node)",
        flag="--kafka-brokers",
        default=1,
    )
    broker_config: tuple[str, ...] = option(
        "Kafka broker properties (name=value, one a line) for every broker the run starts",
        ini="kafka_broker_config",
        kind="lines",
        default=(),
    )
    bootstrap: str = option(
        "host:port of an existing cluster, for --kafka-backend=external", flag="--kafka-bootstrap"
    )
    # -- security -------------------------------------------------------------------------
    security: str = option(
        f"the session broker's listener: {', '.join(PROTOCOLS)} (default PLAINTEXT). "
        "Tests reach it with kafka_broker.client_config(user) and "
        "kafka_broker.spark_options(user)",
        flag="--kafka-security",
        ini="kafka_security",
        env="KAFKATEST_SECURITY",
        default="PLAINTEXT",
    )
    sasl_mechanisms: str = option(
        f"SASL mechanism(s) of a SASL listener, comma-separated: {', '.join(MECHANISMS)} "
        "(default PLAIN)",
        flag="--kafka-sasl-mechanism",
        ini="kafka_sasl_mechanisms",
    )
    users: tuple[str, ...] = option(
        "NAME:PASSWORD of a user of a SASL listener (repeatable)",
        flag="--kafka-user",
        ini="kafka_users",
        kind="lines",
        repeat=True,
        default=(),
    )
    # -- Spark ------------------------------------------------------------------------------
    spark_remote: str = option(
        "run the spark fixture over Spark Connect: 'local' (a local Connect server with "
        "the connector) or sc://host:port; default: the warm server of `kafkatest "
        "spark-server start` if one runs, 'off' to ignore it",
        flag="--spark-remote",
        ini="spark_remote",
        env="KAFKATEST_SPARK_REMOTE",
    )
    spark_master: str = option(
        "the spark fixture's master: local[N] (default local[2]), local-cluster[W,C,M] "
        "(executors in their own JVMs), spark://host:port, or standalone[W] (kafkatest "
        "starts a master and W workers from the installed PySpark)",
        flag="--spark-master",
        ini="spark_master",
        env="KAFKATEST_SPARK_MASTER",
        default="local[2]",
    )
    spark_extras: tuple[str, ...] = option(
        "Spark modules the spark fixture attaches next to the connector: avro, protobuf "
        "(for from_avro / from_protobuf)",
        ini="spark_extras",
        env="KAFKATEST_SPARK_EXTRAS",
        default=(),
    )
    log_level: str = option(
        "what Spark prints on the console: ERROR (default), WARN, INFO, DEBUG; the full "
        "log goes to a file named in failing tests' reports",
        flag="--kafka-log-level",
        env="KAFKATEST_LOG_LEVEL",
        default="ERROR",
    )
    spark_log_level: str = option(
        "Spark's own log level (wins over `KAFKATEST_LOG_LEVEL` for Spark)",
        env="KAFKATEST_SPARK_LOG_LEVEL",
    )
    spark_cds: str = option(
        "the Spark driver JVM's class-data-sharing archive: `auto` (default: written by "
        "the first session start, in the cache directory, and mapped by every later one; "
        "a cold start in about half the time), `off`, or a directory to keep it in",
        env="KAFKATEST_SPARK_CDS",
    )
    kafka_cds: str = option(
        "the class-data-sharing archives of the JVMs kafkatest starts for Kafka (its "
        "broker, and its tools): `auto` (default: written by the first run of each, in "
        "the cache directory, and mapped by every later one; a tool runs in about half "
        "the time, a broker starts about 2 s sooner), `off`, or a directory to keep them in",
        env="KAFKATEST_KAFKA_CDS",
    )
    spark_server: str = option(
        "`auto`: the first Spark test of a run starts the warm Spark Connect server of "
        "`kafkatest spark-server start` when none runs, and every later run uses it; it "
        "stops itself once unused for `spark_server_idle_minutes` (PySpark 4.0+, whose "
        "server refuses clients without its key); empty (default): only when started by hand",
        ini="spark_server",
        env="KAFKATEST_SPARK_SERVER",
    )
    spark_server_idle_minutes: float = option(
        "minutes without a run after which a warm server started by `spark_server = auto` "
        "stops itself (default 30; more than 0, at most a week)",
        ini="spark_server_idle_minutes",
        env="KAFKATEST_SPARK_SERVER_IDLE_MINUTES",
        default=30.0,
    )
    pytest_server_preload: tuple[str, ...] = option(
        "modules `kafkatest pytest`'s fork server imports once for every run, besides "
        "pytest, its plugins, PySpark's Connect client and kafkatest (your job's heavy "
        "libraries; never the modules under test, which each run imports anew)",
        ini="pytest_server_preload",
        env="KAFKATEST_PYTEST_SERVER_PRELOAD",
        default=(),
    )
    pytest_server_idle_minutes: float = option(
        "minutes without a run after which the fork server of `kafkatest pytest` stops "
        "itself (default 30; more than 0, at most a week)",
        ini="pytest_server_idle_minutes",
        env="KAFKATEST_PYTEST_SERVER_IDLE_MINUTES",
        default=30.0,
    )
    spark_server_state: str = option(
        "where `kafkatest spark-server` records the warm server (default: in the cache directory)",
        env="KAFKATEST_SPARK_SERVER_STATE",
    )
    reports: str = option(
        "directory for the reports of failed delivery assertions (default kafkatest-reports)",
        flag="--kafkatest-reports",
    )
    # -- jars -------------------------------------------------------------------------------
    cache_dir: str = option(
        "where jars and manifests are cached (default `~/.cache/kafkatest`)",
        env="KAFKATEST_CACHE_DIR",
    )
    spark_jars_dir: str = option(
        "use the connector jars in this directory instead of resolving them "
        "(`KAFKATEST_JARS_DIR` is the older name)",
        env="KAFKATEST_SPARK_JARS_DIR",
    )
    jars_dir: str = option("older name of KAFKATEST_SPARK_JARS_DIR", env="KAFKATEST_JARS_DIR")
    spark_jars: str = option(
        "`resolve` (default), `packages` (Spark resolves the connector itself through "
        "`spark.jars.packages`) or `none`",
        env="KAFKATEST_SPARK_JARS",
    )
    connector_version: str = option(
        "connector version to use instead of the installed PySpark's",
        env="KAFKATEST_CONNECTOR_VERSION",
    )
    kafka_version: str = option(
        "Apache Kafka release for the `kafka` backend (default 4.3.1)",
        env="KAFKATEST_KAFKA_VERSION",
    )
    kafka_jars_dir: str = option(
        "use the broker jars in this directory", env="KAFKATEST_KAFKA_JARS_DIR"
    )
    jvm_flags: str = option(
        "flags for the JVMs kafkatest starts for tests (the kafka backend's brokers, "
        "Spark's driver, Kafka's tools); default `-XX:TieredStopAtLevel=1 "
        "-XX:+UseSerialGC`, which start a short-lived JVM in about half the time and "
        "change nothing a test observes; set it empty for the JVM's own defaults",
        env="KAFKATEST_JVM_FLAGS",
    )
    maven_repo_url: str = option(
        "another Maven repository or mirror", env="KAFKATEST_MAVEN_REPO_URL"
    )
    maven_settings: str = option("your own Maven `settings.xml`", env="KAFKATEST_MAVEN_SETTINGS")
    # -- the kafkatest command ------------------------------------------------------------
    control: str = option(
        "`host:port` of a standalone emulator's control interface, for `kafkatest fault`",
        env="KAFKATEST_CONTROL",
    )
    client_config: str = option(
        "a child process's client configuration, as JSON",
        env="KAFKATEST_CLIENT_CONFIG",
        internal=True,
    )

    #: Option name -> where its value came from ("default" when nothing set it).
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
        values: dict[str, Any] = {}
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
                    except ValueError as problem:
                        raise ConfigError(f"{option.name} = {raw!r} ({place}): {problem}") from None
                    origins[option.name] = place
                    break
            else:
                origins[option.name] = "default"
        return cls(**values, origins=MappingProxyType(origins))

    def given(self, name: str) -> bool:
        """Whether a flag, variable or ini key set it (not its default)."""
        return self.origins.get(name, "default") != "default"


OPTIONS: tuple[Option, ...] = tuple(
    replace(f.metadata["option"], name=f.name) for f in fields(Config) if "option" in f.metadata
)
BY_NAME: Mapping[str, Option] = MappingProxyType({option.name: option for option in OPTIONS})
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
    """A value as given (text from the environment, a list from pytest) as its kind;
    ValueError saying what was expected."""
    if option.kind == "int":
        try:
            return raw if isinstance(raw, int) else int(str(raw).strip())
        except ValueError:
            raise ValueError("expected a whole number") from None
    if option.kind == "minutes":
        try:
            minutes = float(str(raw).strip())
        except ValueError:
            minutes = -1.0
        if not 0 < minutes <= MAX_MINUTES:
            raise ValueError(
                f"give the minutes, more than 0 and at most a week ({MAX_MINUTES}): 30, say, or 0.5"
            )
        return minutes
    if option.kind in ("list", "lines"):
        if isinstance(raw, str):
            separator = "," if option.kind == "list" else "\n"
            return tuple(item.strip() for item in raw.split(separator) if item.strip())
        return tuple(str(item) for item in raw)  # type: ignore[attr-defined]
    return str(raw)


def _given(raw: object) -> bool:
    """Whether a source gives a value: None, "" and an empty list say nothing."""
    return raw is not None and raw != "" and raw != [] and raw != ()


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
