"""The plugin's command-line and ini options, checked once at start-up.

Which flags, ini keys and variables exist is declared once, in `kafkatest.config.OPTIONS`;
here they are added to pytest and resolved into one frozen `Config` (flag > environment
> ini > default), kept on the pytest config for every plugin module (`kafkatest_config`).
A bad value is one usage error naming the option, before any broker or Spark starts.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafkatest.brokers.registry import BACKENDS
from kafkatest.config import OPTIONS, Config

_CONFIG_KEY = pytest.StashKey[Config]()

#: pytest's ini type for each kind of value.
_INI_TYPES = {"lines": "linelist", "list": "args"}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafkatest", "Kafka + PySpark testing")
    for option in OPTIONS:
        if option.flag:
            attrs: dict[str, object] = {"help": option.help + option.where()}
            if option.kind == "int":
                attrs["type"] = int
            if option.repeat:
                attrs["action"] = "append"
            # A flag-only option keeps its default in argparse; the others must say
            # "not given" (None) so that the environment and ini file are asked.
            flag_only = option.env is None and option.ini is None
            attrs["default"] = option.default if flag_only else None
            group.addoption(option.flag, **attrs)  # type: ignore[arg-type]
        if option.ini:
            text = f"default of {option.flag}" if option.flag else option.help
            ini_type = _INI_TYPES.get(option.kind)
            if ini_type:
                parser.addini(option.ini, text, type=ini_type, default=[])  # type: ignore[arg-type]
            else:
                parser.addini(option.ini, text, default="")


def kafkatest_config(config: pytest.Config) -> Config:
    """The run's `Config`, built once from its flags, environment and ini file."""
    if _CONFIG_KEY not in config.stash:
        flags = {o.flag: config.getoption(o.flag) for o in OPTIONS if o.flag}
        ini = {o.ini: config.getini(o.ini) for o in OPTIONS if o.ini}
        try:
            config.stash[_CONFIG_KEY] = Config.build(flags, ini)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
    return config.stash[_CONFIG_KEY]


#: The markers the plugin declares, as pytest's `markers` ini lines (the reference page of
#: the docs is made from them).
MARKERS = (
    "kafka_backends(*names): run this test only on these broker backends",
    "kafka_broker_config(settings): run this test on a broker started with these Kafka "
    "broker properties (shared by the tests that ask for the same ones)",
    "kafka_min_version(version, why): skip on the kafka backend when it runs an older "
    "Apache Kafka (KAFKATEST_KAFKA_VERSION)",
    "kafka_requests: log the emulated broker's requests during this test and summarise "
    "them in its report if it fails (what the job asked for); nothing on other backends",
    "local_spark: give this test a local (classic) SparkSession in a run whose spark "
    "fixture is Spark Connect (the warm server, --spark-remote): for spark_clock and "
    "anything else that needs the driver's JVM",
)


def cluster_size(settings: Config, backend: str) -> int:
    """How many brokers `backend` runs: its own option, for the backends with
    `Capability.CLUSTERS` (each flag is named after its backend); 1 for the others."""
    return {"emulator": settings.emulator_brokers, "kafka": settings.kafka_brokers}.get(backend, 1)


#: More emulated brokers than this is a typo, not a cluster (each takes a port).
MAX_EMULATOR_BROKERS = 64


def pytest_configure(config: pytest.Config) -> None:
    kafkatest_config(config)
    selected_backends(config)  # a misspelt backend stops the run before anything starts
    _check_options(config)
    _check_security(config)
    _set_log_level(config)
    for marker in MARKERS:
        config.addinivalue_line("markers", marker)
    for noise in PYSPARK_NOISE:
        config.addinivalue_line("filterwarnings", noise)


#: Warnings PySpark's own code raises that no user caused or can act on: PySpark 3.5's
#: Connect client compares versions with distutils' LooseVersion on every DataFrame
#: call, so one test on a warm server (or --spark-remote) ended in "102 warnings";
#: PySpark 4.0's logger calls `Logger.warn` (one test on a warm server: 1 warning).
#: Only PySpark's modules: a user's own LooseVersion or `warn` still warns.
PYSPARK_NOISE = (
    r"ignore:distutils Version classes are deprecated:DeprecationWarning:pyspark\.",
    r"ignore:The 'warn' method is deprecated:DeprecationWarning:pyspark\.",
)


def _set_log_level(config: pytest.Config) -> None:
    """--kafka-log-level becomes KAFKATEST_LOG_LEVEL before Spark (or Kafka) starts."""
    import os

    from kafkatest.spark.logs import LEVELS, console_level

    settings = kafkatest_config(config)
    level = settings.log_level if settings.origins["log_level"] == "--kafka-log-level" else ""
    if level and level.upper().replace("WARNING", "WARN") not in LEVELS:
        raise pytest.UsageError(
            f"--kafka-log-level={level!r} is not a log level: use one of {', '.join(LEVELS)}"
        )
    if level:
        os.environ["KAFKATEST_LOG_LEVEL"] = level.upper()
    try:
        console_level()
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def _check_options(config: pytest.Config) -> None:
    """Bad option values are one usage error at start, naming the option."""
    settings = kafkatest_config(config)
    brokers = settings.emulator_brokers
    if not 1 <= brokers <= MAX_EMULATOR_BROKERS:
        raise pytest.UsageError(
            f"--emulator-brokers={brokers}: the emulator serves 1 to {MAX_EMULATOR_BROKERS} "
            "brokers (default 1; 3 to test leader moves)"
        )
    from kafkatest.brokers.config import MAX_KAFKA_BROKERS

    kafka_brokers = settings.kafka_brokers
    if not 1 <= kafka_brokers <= MAX_KAFKA_BROKERS:
        raise pytest.UsageError(
            f"--kafka-brokers={kafka_brokers}: the kafka backend runs 1 to {MAX_KAFKA_BROKERS} "
            "brokers (default 1; 3 to test leader moves and broker loss)"
        )
    bootstrap = settings.bootstrap
    if bootstrap:
        for address in str(bootstrap).split(","):
            host, _, port = address.strip().rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise pytest.UsageError(
                    f"--kafka-bootstrap={bootstrap!r}: give host:port[,host:port] "
                    f"({address.strip()!r} is not host:port)"
                )
    if "external" in selected_backends(config) and not bootstrap:
        raise pytest.UsageError(
            "--kafka-backend=external needs --kafka-bootstrap host:port of the cluster"
        )
    master = spark_master(config)
    if not _MASTER.fullmatch(master):
        raise pytest.UsageError(
            f"--spark-master={master!r}: give local[N], local-cluster[W,C,M] (workers, "
            "cores and MB each), spark://host:port or standalone[W] (a cluster of W workers, "
            "1 to 8, that kafkatest starts)"
        )
    if settings.spark_server not in ("", "auto"):
        raise pytest.UsageError(
            f"spark_server = {settings.spark_server!r} ({settings.origins['spark_server']}): "
            "give auto (the first Spark test starts the warm server) or leave it empty"
        )
    remote = spark_remote(config)
    if remote and not (remote == "local" or remote.startswith(("local[", "sc://"))):
        raise pytest.UsageError(
            f"--spark-remote={remote!r}: give local, local[N], sc://host:port or off"
        )
    _warn_if_executors_cannot_reach_the_broker(config, master, remote)
    reports = settings.reports
    if reports and Path(reports).exists() and not Path(reports).is_dir():
        raise pytest.UsageError(
            f"--kafkatest-reports={reports!r} is a file; give a directory for the reports"
        )


def _warn_if_executors_cannot_reach_the_broker(
    config: pytest.Config, master: str, remote: str
) -> None:
    """A Spark master or Connect server on another machine cannot reach a broker that
    advertises loopback: its executors would time out connecting, with nothing to say why."""
    where = re.fullmatch(r"(?:spark|sc)://([^:/]+|\[[^\]]+\])(?::\d+)?/?", remote or master)
    if where is None:
        return
    from kafkatest._ground.exposure import is_loopback

    if is_loopback(where.group(1)):
        return
    advertised = kafkatest_config(config).advertised_host or "127.0.0.1"
    if not is_loopback(advertised):
        return
    config.issue_config_time_warning(
        UserWarning(
            f"Spark runs at {remote or master}, but the broker advertises {advertised}: "
            "executors on another machine cannot reach loopback. Pass "
            "--kafka-advertised-host with this machine's address (or use "
            "--kafka-backend=external with a cluster both reach)."
        ),
        stacklevel=2,
    )


#: Masters the spark fixture accepts; standalone[W] is a cluster kafkatest starts.
_STANDALONE = re.compile(r"standalone\[([1-8])\]")
_MASTER = re.compile(
    r"local(\[(\d+|\*)\])?|local-cluster\[\d+, *\d+, *\d+\]|spark://[^/\s]+:\d+|"
    + _STANDALONE.pattern
)


def spark_master(config: pytest.Config) -> str:
    """The spark fixture's master (local[2] unless an option, env or ini says)."""
    return kafkatest_config(config).spark_master


def spark_remote(config: pytest.Config) -> str:
    """The Spark Connect server the spark fixture uses ('' for classic local Spark)."""
    remote = kafkatest_config(config).spark_remote
    if remote == "off":
        return ""
    if not remote:
        from kafkatest.spark.server import usable_server

        warm = usable_server()  # `kafkatest spark-server start` (warm mode)
        remote = warm.remote if warm is not None else ""
    return remote


def auto_server_refusal(config: pytest.Config) -> str | None:
    """Why `spark_server = auto` starts no warm server in this run (None: it will, at the
    first Spark test). Only for the default local Spark, and only where the server
    refuses other users' clients (Spark Connect 4.0+ checks its pre-shared key)."""
    settings = kafkatest_config(config)
    if settings.spark_server != "auto":
        return "not asked for"
    if settings.given("spark_remote") or settings.given("spark_master"):
        return "--spark-remote or --spark-master chooses where Spark runs"
    import pyspark

    from kafkatest.spark.server import checks_tokens

    if not checks_tokens(pyspark.__version__):
        return (
            f"PySpark {pyspark.__version__}'s Spark Connect server has no authentication, so "
            "no server is started unasked (kafkatest spark-server start does, knowingly)"
        )
    return None


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Say where Spark runs when it is not this process: a warm server is found, not
    asked for, so a user must see that this run uses it (and how not to)."""
    from kafkatest.spark.server import running_server, usable_server

    lines = []
    explicit = kafkatest_config(config).given("spark_remote")
    running = None if explicit else running_server()
    if running is not None:
        if usable_server() is None:
            lines.append(
                f"kafkatest: a warm Spark Connect server runs PySpark {running.pyspark}, not "
                "this environment's; Spark starts in this process "
                "(kafkatest spark-server stop, then start it again here)"
            )
        elif spark_remote(config) == running.remote:
            lines.append(
                f"kafkatest: spark runs on the warm Spark Connect server {running.address} "
                f"(pid {running.pid}); --spark-remote=off to start Spark in this process"
            )
    elif kafkatest_config(config).spark_server == "auto":
        refusal = auto_server_refusal(config)
        if refusal is None:
            lines.append(
                "kafkatest: spark_server = auto: the first Spark test starts the warm Spark "
                f"Connect server, which stops after {kafkatest_config(config).spark_server_idle_minutes:g} idle minutes"
            )
        else:
            lines.append(f"kafkatest: spark_server = auto, but Spark starts here: {refusal}")
    return lines


def selected_backends(config: pytest.Config) -> list[str]:
    """The backends named by --kafka-backend (comma-separated), checked."""
    raw = kafkatest_config(config).backend
    names = [name.strip() for name in raw.split(",") if name.strip()]
    unknown = [name for name in names if name not in BACKENDS]
    if unknown or not names:
        raise pytest.UsageError(
            f"--kafka-backend: unknown backend {', '.join(unknown) or repr(raw)}; "
            f"choose from {', '.join(BACKENDS)} (comma-separated for several)"
        )
    return names


def _check_security(config: pytest.Config) -> None:
    """A misspelt protocol or mechanism is a usage error before any broker starts."""
    options = security_options(config)
    if not options:
        return
    from kafkatest.errors import BrokerError
    from kafkatest.security import Security

    try:
        Security.of(
            str(options["security_protocol"]),
            options.get("sasl_mechanisms"),  # type: ignore[arg-type]
            options.get("users"),  # type: ignore[arg-type]
        )
    except BrokerError as exc:
        raise pytest.UsageError(f"--kafka-security: {exc}") from None


def security_options(config: pytest.Config) -> dict[str, object]:
    """start_broker's security keywords from the command line, ini file or environment."""
    settings = kafkatest_config(config)
    protocol = settings.security
    if protocol.upper() == "PLAINTEXT":
        return {}
    mechanisms = settings.sasl_mechanisms
    users: dict[str, str] = {}
    for entry in settings.users:
        name, sep, password = str(entry).partition(":")
        if not sep or not name or not password:
            raise pytest.UsageError(f"--kafka-user: expected NAME:PASSWORD, got {entry!r}")
        users[name] = password
    options: dict[str, object] = {"security_protocol": protocol}
    if mechanisms:
        options["sasl_mechanisms"] = mechanisms
    if users:
        options["users"] = users
    return options


def _ini_config(config: pytest.Config) -> dict[str, str]:
    """The ``kafka_broker_config`` ini lines (``name=value``), for every broker of the run."""
    settings: dict[str, str] = {}
    for line in kafkatest_config(config).broker_config:
        name, sep, value = str(line).partition("=")
        if not sep or not name.strip():
            raise pytest.UsageError(
                f"kafka_broker_config: {line!r} is not name=value (e.g. auto.create.topics.enable=false)"
            )
        settings[name.strip()] = value.strip()
    return settings


def xdist_worker(config: pytest.Config) -> str | None:
    """This process's pytest-xdist worker id (gw0, gw1, ...), or None outside xdist."""
    workerinput = getattr(config, "workerinput", None)
    return None if workerinput is None else str(workerinput.get("workerid", "gw"))
