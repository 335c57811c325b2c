"""Developer sessions: `nox -s tests` (the fast tier), `nox -s rest`, `nox -s by_hand`, `nox -s all`,
`nox -s demo`, `nox -s lint`, `nox -s conformance`, `nox -s fuzz`, `nox -s spark35`,
`nox -s spark40`, `nox -s spark43`, `nox -s downstream-3.5` (-4.0, -4.2, -4.3),
`nox -s kafka39`, `nox -s kafka41`, `nox -s client_suites`."""

import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True

INSTALL = ("-c", "constraints.txt", "-e", ".[test]")


@nox.session
def tests(session: nox.Session) -> None:
    """The fast tier on both backends: the README's test command (see tests/tiers.py)."""
    session.install(*INSTALL)
    session.run("pytest", *session.posargs)


@nox.session
def rest(session: nox.Session) -> None:
    """Everything the fast tier leaves out, on both backends: with `tests`, the suite."""
    session.install(*INSTALL)
    session.run("pytest", "--tier=rest", *session.posargs)


@nox.session
def by_hand(session: nox.Session) -> None:
    """The tests CI leaves out (tests/tiers.py BY_HAND, each with why), on both backends:
    `tests`, `rest` and this are the suite."""
    session.install(*INSTALL)
    session.run("pytest", "--tier=hand", *session.posargs)


@nox.session(name="all")
def all_tests(session: nox.Session) -> None:
    """The whole suite in one run, on both backends."""
    session.install(*INSTALL)
    session.run("pytest", "--tier=all", *session.posargs)


@nox.session
def conformance(session: nox.Session) -> None:
    """The same suite against real Apache Kafka, run from Maven Central jars."""
    session.install(*INSTALL)
    session.run("pytest", "--tier=all", "--kafka-backend=kafka", *session.posargs)


#: The older Apache Kafka releases the conformance suite (tests/conformance) runs on, each
#: in a session of its name (CI runs kafka39, the oldest and most different release;
#: kafka41 runs by hand, as CI's budget holds one of them); the default release
#: (kafkatest.jars.coordinates.DEFAULT_KAFKA_VERSION) runs it, and the whole suite, in
#: `nox -s conformance` and CI's rest tier. docs/how-to/versions.md lists them all.
OLDER_KAFKA = {"kafka39": "3.9.1", "kafka41": "4.1.2"}
CONFORMANCE = "tests/conformance"


def _conformance_on(release: str) -> Callable[[nox.Session], None]:
    def run(session: nox.Session) -> None:
        session.install(*INSTALL)
        session.run(
            "pytest",
            "--kafka-backend=kafka",
            *(session.posargs or (CONFORMANCE,)),
            env={"KAFKATEST_KAFKA_VERSION": release},
        )

    run.__doc__ = f"The conformance suite ({CONFORMANCE}) against real Apache Kafka {release}."
    return run


for _name, _release in OLDER_KAFKA.items():
    nox.session(name=_name)(_conformance_on(_release))


#: Spark tests that run on the default PySpark line only, and why; every other test
#: marked `spark` (tests/tiers.py derives the marker) runs on the older lines too.
DEFAULT_LINE_ONLY = {
    "tests/test_spark_connect.py": "Spark Connect (--spark-remote) is tested on PySpark 4.2",
    "tests/test_spark_masters.py": "local-cluster (--spark-master) is tested on PySpark 4.2",
    "tests/test_spark_server.py": "warm mode's refusals and Ctrl-C: kafkatest's own, on 4.2",
    "tests/test_xdist.py": "pytest-xdist workers (a SparkSession each) are tested on PySpark 4.2",
    "tests/test_bench.py": "the bench's figures are taken on PySpark 4.2",
    "tests/schema_registry/test_spark_avro.py": (
        "what from_avro does with poison pills is measured on PySpark 4.2 (README table)"
    ),
    # Whole pytest runs in a child, each paying a cold Spark start, that test kafkatest's
    # own Python around Spark (the lines' differences there are covered by
    # test_lost_interrupts, test_spark_stop and the scenario tests, which do run).
    "tests/test_interrupt.py": "Ctrl-C of a whole run: kafkatest's handling, on PySpark 4.2",
    "tests/test_early_broker.py": "the plugin's start order: kafkatest's own, on PySpark 4.2",
    "tests/test_demo.py": "`kafkatest demo` runs the scenario runner each line runs",
    "tests/scenarios/test_repro_cli.py": "`kafkatest repro` wraps the runner each line runs",
    "tests/oracles/test_catch_matrix.py": (
        "the catch matrix measures the oracles, kafkatest's own logic, on PySpark 4.2 "
        "(classic and Connect); each line runs the oracles' own Spark tests"
    ),
    "tests/oracles/test_quiet.py": "a child pytest run checking kafkatest's own output",
    "tests/oracles/test_process_mode.py": (
        "the oracles' child-process mode; a crashed job's replay runs per line in test_restart"
    ),
    # kafkatest's own Python around a job, the same on every line: what the connector
    # does on each line is what the older lines are run for, and these do not show it.
    "tests/sinks/test_sinks_spark.py": (
        "kafkatest's foreachBatch sinks; the connector's Kafka sink runs per line in "
        "test_sinks_topic, the Delta sink in its own process"
    ),
    "tests/test_sample_job.py": "the sample job's fixtures and reports, kafkatest's own",
    "tests/test_readme_scenario_example.py": "a docs example; test_readme_example runs per line",
    "tests/test_readme_sinks_example.py": "a docs example; test_readme_example runs per line",
    "tests/scenarios/test_incident_example.py": "a docs example of capture and replay",
    "tests/oracles/test_docs_example.py": "a docs example; the oracles run per line in test_split",
    "tests/oracles/test_strategies.py": "how an oracle picks its strategy, kafkatest's own",
    "tests/test_spark_cds.py": (
        "the class-data-sharing archive is kafkatest's and the JDK's, alike on every line; "
        "a line whose JVM did not map it would start slower, never differently"
    ),
    "tests/checkpoints/test_fault_explained.py": (
        "how a report explains a fault; what Spark does after each fault runs per line in "
        "test_checkpoint_faults"
    ),
    # The oracles' and the state checks' own logic: how they read each output mode and
    # sink, plan their stops, name a fault; the oracles run per line in test_split and
    # test_restart, the bounded-state oracle in test_state_example.
    "tests/oracles/test_output_modes.py": "how the oracles read each output mode and sink",
    "tests/oracles/test_restart_planning.py": "how the restart oracle plans its stops",
    "tests/oracles/test_fault_stops.py": "how an oracle's report names a checkpoint fault",
    "tests/oracles/test_redelivery.py": "the redelivery oracle's verdicts, its own logic",
    "tests/state/test_bounded_state.py": (
        "the bounded-state oracle over Connect and on a join: its own logic; "
        "test_state_example runs it per line"
    ),
    "tests/schema_registry/test_schema_evolution.py": (
        "what from_avro and confluent-kafka's deserializer make of a changed subject, "
        "measured on the default line; the Avro round trip runs per line in test_avro_recipe"
    ),
}
#: Single tests of files that otherwise run on every line: the broker's side of a
#: refusal (its error, its ACL check), alike whatever client asks.
DEFAULT_LINE_ONLY_TESTS = {
    "tests/security/test_spark_security.py::test_a_job_with_a_wrong_password_fails_with_the_brokers_message": (
        "the broker's error text; SASL/SCRAM end to end runs per line"
    ),
    "tests/security/test_spark_security.py::test_a_truststore_that_does_not_trust_the_broker_fails_the_tls_handshake": (
        "the JVM's TLS handshake, the same JDK on every line"
    ),
    "tests/security/test_spark_security.py::test_a_scenario_runs_on_a_secured_broker": (
        "the scenario runner's security options, kafkatest's own"
    ),
    "tests/acls/test_spark_acls.py::test_a_job_with_kafka_group_id_needs_no_read_on_that_group": (
        "the broker's ACL check for a group the client never joins"
    ),
    "tests/acls/test_spark_acls.py::test_a_sink_without_write_fails_its_tasks": (
        "the broker's refusal; the same sink without idempotence runs per line"
    ),
}
#: Delta publishes no release for PySpark 4.2.1 here; the older lines run its sink test.
DELTA_TESTS = "tests/sinks/test_delta_sink.py"


def _spark_line(line: str, extras: str, delta: bool) -> None:
    def run(session: nox.Session) -> None:
        # As a project installs it: the line's PySpark and kafkatest, no constraints file,
        # so pip picks pyarrow, numpy, pandas and the rest as it would for a user; then
        # what `pip check` and `kafkatest doctor` say of that set (doctor fails on a
        # combination known to break), then the Spark tests, warm mode among them.
        # delta-spark's own metadata lets pip pick a release whose jars are not built
        # for this line (4.4.1 accepts PySpark 4.0 but publishes no 4.0 jar): the line's
        # delta-spark is named, as docs/how-to/seeding-and-sinks.md tells a user to.
        delta_pin = [f"delta-spark=={DELTA_FOR_LINE[line]}"] if delta else []
        session.install(f"pyspark=={line}.*", *delta_pin, "-e", f".[{extras}]")
        session.run("python", "-m", "pip", "check")
        session.run("kafkatest", "doctor")
        _spark_line_tests(session, delta=delta, part=LINE_PART.get(line, ()))

    run.__doc__ = (
        f"The Spark tests on PySpark {line}, installed as a project installs it (no "
        f"constraints file). Arguments replace the selection: `nox -s {run_name(line)} -- "
        "tests/sinks -x`."
    )
    nox.session(name=run_name(line))(run)


def run_name(line: str) -> str:
    return "spark" + line.replace(".", "")


#: The other PySpark lines CI runs the Spark tests on (the default is constraints.txt's),
#: with the extras each takes: Delta's sink runs on 4.0 alone (Delta publishes no release
#: for 4.2 and 4.3 here, and CI's budget holds one cold start with Delta's jars; the sink
#: is kafkatest's code, the same on 3.5).
SPARK_LINES = {"3.5": "test", "4.0": "test,delta", "4.3": "test"}
#: The delta-spark release line built for each PySpark line that has one here.
DELTA_FOR_LINE = {"3.5": "3.3.*", "4.0": "4.0.*"}
#: What the other lines run in CI: the default line (4.2, with real Kafka too) runs
#: every Spark test; CI's budget (30 minutes on two cores) leaves the other lines a
#: part, the newest (4.3) the largest. Each install is proven the same way (no
#: constraints, pip check, doctor), then the README's example, the connector reading
#: and writing, the state reader (refused on 3.5) and, on 4.0, Delta's sink; 3.5, the
#: oldest and most different line (Scala 2.12, Kafka clients 3.x), also data lost under
#: a query; 4.3 also the state example, warm mode and what 4.1-4.3 changed (Real-Time
#: Mode's slot check, transformWithState's timers and TTL, TwsTester, AQE on stateless
#: queries; Real-Time Mode's runs run on the default line). `nox -s spark43 -- --tier=all
#: -m spark` (spark35, spark40) runs them all by hand.
_LINE_CORE = (
    "tests/test_readme_example.py",
    "tests/emulator/test_spark_connector.py",
    "tests/state/test_read_state.py",
)
LINE_PART = {
    "4.3": (
        *_LINE_CORE,
        "tests/state/test_state_example.py",
        "tests/test_spark_server_lines.py",
        "tests/test_real_time_mode.py::test_a_session_short_of_task_slots_is_refused_before_the_query_starts",
        "tests/state/test_processor_timers.py",
        "tests/state/test_event_time_timers.py",
        "tests/test_spark_lines_behaviour.py",
    ),
    "4.0": _LINE_CORE,
    "3.5": (*_LINE_CORE, "tests/scenarios/test_records_deleted.py"),
}
for _line, _extras in SPARK_LINES.items():
    _spark_line(_line, _extras, delta="delta" in _extras)


#: The PySpark lines kafkatest supports (kafkatest.jars.coordinates.SUPPORTED_PYSPARK):
#: each `downstream-<line>` session installs one as a downstream project does.
DOWNSTREAM_LINES = ("3.5", "4.0", "4.2", "4.3")
ROOT = Path(__file__).parent


def _downstream(session: nox.Session, line: str) -> None:
    """What a project gets from `pip install "pyspark==<line>.*" "kafkatest[schemas,connect]"`
    in a fresh virtualenv, with no constraints file: pip alone picks pyarrow, numpy,
    pandas and the rest. `pip check`, then `kafkatest doctor` (which fails on a
    combination known to break), then a streaming suite (fixtures/suites/downstream:
    complete and append modes, session windows, dedup, data loss, a pandas UDF with
    state) on the warm Spark Connect server and the emulator."""
    work = Path(tempfile.mkdtemp(prefix=f"kafkatest-downstream-{line}-"))
    venv, project = work / "venv", work / "project"
    state = {"KAFKATEST_SPARK_SERVER_STATE": str(work / "spark-server.json")}
    try:
        session.run(sys.executable, "-m", "venv", str(venv))
        python, kafkatest = str(venv / "bin" / "python"), str(venv / "bin" / "kafkatest")
        # A fresh virtualenv's own pip (23.2 with Python 3.11) meets `pyspark[connect]`
        # beside `pyspark==3.5.*` by downloading every newer PySpark's sdist (450 MB
        # each) before it settles: the recipe upgrades pip first.
        session.run(python, "-m", "pip", "install", "-q", "-U", "pip")
        # Not --no-compile: without bytecode (and with PYTHONDONTWRITEBYTECODE, as some CI
        # sandboxes set it) each Python worker compiled PySpark again, and on 4.3 the
        # server's foreachBatch worker missed its deadline ("failed to connect back").
        session.run(
            python, "-m", "pip", "install", "-q", f"pyspark=={line}.*", f"{ROOT}[schemas,connect]"
        )
        session.run(python, "-m", "pip", "check")
        session.run(python, "-m", "pip", "list", "--format=freeze", silent=False)
        session.run(kafkatest, "doctor")
        shutil.copytree(ROOT / "fixtures" / "suites" / "downstream", project)
        with session.chdir(project):
            session.run(kafkatest, "spark-server", "start", env=state)
            try:
                session.run(
                    python,
                    "-m",
                    "pytest",
                    "-p",
                    "no:cacheprovider",
                    "--kafka-backend=emulator",
                    *session.posargs,
                    env=state,
                )
            except BaseException:
                server_log = work / "spark-server.log"  # removed below with the rest
                if server_log.is_file():
                    session.log(f"the server's log, last lines:\n{server_log.read_text()[-6000:]}")
                raise
            finally:
                session.run(kafkatest, "spark-server", "stop", env=state)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _downstream_session(line: str) -> None:
    def run(session: nox.Session) -> None:
        _downstream(session, line)

    run.__doc__ = f"PySpark {line} installed as a project does (no constraints): warm mode, jobs."
    nox.session(name=f"downstream-{line}", venv_backend="none")(run)


for _line in DOWNSTREAM_LINES:
    _downstream_session(_line)


def _spark_line_tests(session: nox.Session, delta: bool = True, part: tuple[str, ...] = ()) -> None:
    """Every `spark` test on the emulator (the connector's line is what differs; the
    default line runs them on real Kafka too), or the `part` of them a line runs, then
    the Delta sink's in a process of its own (Delta's jars must be there when the JVM
    starts) where Delta has a release for the line."""
    if session.posargs:
        session.run("pytest", "--kafka-backend=emulator", *session.posargs)
        return
    if part:
        deselected = [f"--deselect={test}" for test in DEFAULT_LINE_ONLY_TESTS]
        session.run(
            "pytest",
            "--tier=all",
            "--kafka-backend=emulator",
            "--durations=10",
            *deselected,
            *part,
        )
        if delta:
            session.run("pytest", "--tier=all", "--kafka-backend=emulator", DELTA_TESTS)
        return
    ignored = [f"--ignore={path}" for path in (*DEFAULT_LINE_ONLY, DELTA_TESTS)]
    ignored += [f"--deselect={test}" for test in DEFAULT_LINE_ONLY_TESTS]
    session.run(
        "pytest",
        "--tier=all",
        "-m",
        "spark",
        "--kafka-backend=emulator",
        "--durations=20",
        *ignored,
    )
    if delta:
        session.run("pytest", "--tier=all", "--kafka-backend=emulator", DELTA_TESTS)


@nox.session
def demo(session: nox.Session) -> None:
    """The newcomer's demo on the default broker."""
    session.install("-c", "constraints.txt", "-e", ".")
    session.run("kafkatest", "demo", *session.posargs)


@nox.session(venv_backend="none")
def catch_matrix(session: nox.Session) -> None:
    """The oracles' whole catch matrix (docs/oracles.md): every case on classic Spark,
    over Spark Connect, in the state column and (a third of it) on real Kafka, in the
    current environment. CI runs every case on classic Spark and a few in each other
    column (tests/oracles/test_catch_matrix.py's CI_CASES)."""
    session.run(
        "python",
        "-m",
        "pytest",
        "tests/oracles/test_catch_matrix.py",
        "--catch-matrix=full",
        "--durations=10",
        *session.posargs,
    )


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff>=0.6", "mypy>=1.10", "-c", "constraints.txt", "-e", ".")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy", "kafkatest")


@nox.session
def client_suites(session: nox.Session) -> None:
    """Client libraries' own integration suites against both brokers: franz-go's
    pkg/kgo tests (needs Go), librdkafka's test suite (needs npm, gcc, make) and
    confluent-kafka-python's tests/integration (needs git or CONFLUENT_KAFKA_PYTHON_SRC)
    and Kafka 4.1's own @ClusterTest integration tests (kafka-java: needs Java, Maven);
    fails if a test passing on Kafka fails on the emulator. `-- librdkafka` runs one."""
    session.install(*INSTALL)
    session.run("python", "tests/compat/client_suites.py", *session.posargs)


@nox.session(venv_backend="none")
def fuzz(session: nox.Session) -> None:
    """10^6 mutated client frames at an emulator in a child process (kafkatest installed
    in the current environment); prints frames sent, connections closed, crashes,
    hangs, handler exceptions and RSS. Arguments go to the fuzzer: `-- --frames 20000`."""
    session.run("python", "-m", "kafkatest.apps.fuzz", *session.posargs)
