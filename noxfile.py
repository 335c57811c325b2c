"""Developer sessions: `nox -s tests`, `nox -s demo`, `nox -s lint`, `nox -s conformance`, `nox -s fuzz`,
`nox -s spark35`, `nox -s spark40`,
`nox -s kafka39`, `nox -s client_suites`."""

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True

INSTALL = ("-c", "constraints.txt", "-e", ".[test]")


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite on the default backend (what CI runs)."""
    session.install(*INSTALL)
    session.run("pytest", *session.posargs)


@nox.session
def conformance(session: nox.Session) -> None:
    """The same suite against real Apache Kafka, run from Maven Central jars."""
    session.install(*INSTALL)
    session.run("pytest", "--kafka-backend=kafka", *session.posargs)


#: Apache Kafka release line the `kafka39` session runs the conformance suite on.
KAFKA_39 = "3.9.1"


@nox.session
def kafka39(session: nox.Session) -> None:
    """The conformance suite (tests/conformance) against real Apache Kafka 3.9."""
    session.install(*INSTALL)
    session.run(
        "pytest",
        "--kafka-backend=kafka",
        *(session.posargs or ("tests/conformance",)),
        env={"KAFKATEST_KAFKA_VERSION": KAFKA_39},
    )


#: What `spark35` and `spark40` run on the emulator: every test that drives Spark (kept
#: complete by tests/test_spark_lines.py), and the connector's resolution (Scala 2.12
#: coordinates for 3.5).
SPARK_LINE_TESTS = (
    "tests/test_jars.py",
    "tests/test_sample_job.py",
    "tests/test_readme_example.py",
    "tests/test_readme_sinks_example.py",
    "tests/test_readme_scenario_example.py",
    "tests/test_demo.py",
    "tests/test_interrupt.py",
    "tests/test_spark_clients_released.py",
    "tests/test_spark_logs.py",
    "tests/test_spark_stop.py",
    "tests/test_spark_checkpoints.py",
    "tests/test_spark_transactions.py",
    "tests/test_early_broker.py",
    "tests/assertions/test_query_failure.py",
    "tests/acls/test_spark_acls.py",
    "tests/security/test_spark_security.py",
    "tests/conformance/test_compaction_spark.py",
    "tests/sinks",
    "tests/scenarios",
    "tests/clusters/test_cluster_scenarios.py",
    "tests/emulator/test_spark_connector.py",
    "tests/schema_registry/test_spark_extras.py",
)
#: ... and on real Kafka: the Spark scenarios (data loss, topic deletion, partitions).
SPARK_LINE_KAFKA_TESTS = ("tests/scenarios", "tests/test_readme_scenario_example.py")
#: Delta publishes no release for PySpark 4.2.1 here; the older lines run its sink test.
DELTA_TESTS = "tests/sinks/test_delta_sink.py"


@nox.session
def spark35(session: nox.Session) -> None:
    """The Spark-facing tests on PySpark 3.5 (Scala 2.12 connector), in their own venv.

    Arguments replace the default test list: `nox -s spark35 -- tests/sinks -x`.
    """
    session.install("-c", "constraints-spark35.txt", "-e", ".[test,delta]")
    _spark_line_tests(session)


@nox.session
def spark40(session: nox.Session) -> None:
    """The Spark-facing tests on PySpark 4.0 (the previous 4.x line), in their own venv."""
    session.install("-c", "constraints-spark40.txt", "-e", ".[test,delta]")
    _spark_line_tests(session)


def _spark_line_tests(session: nox.Session) -> None:
    """The Spark-facing tests on the emulator, the Spark scenarios on real Kafka, then the
    Delta sink's in a process of its own (Delta's jars must be there when the JVM
    starts) on both brokers."""
    if session.posargs:
        session.run("pytest", "--kafka-backend=emulator", *session.posargs)
        return
    session.run("pytest", "--kafka-backend=emulator", f"--ignore={DELTA_TESTS}", *SPARK_LINE_TESTS)
    session.run("pytest", "--kafka-backend=kafka", *SPARK_LINE_KAFKA_TESTS)
    session.run("pytest", "--kafka-backend=emulator,kafka", DELTA_TESTS)


@nox.session
def demo(session: nox.Session) -> None:
    """The newcomer's demo on the default broker."""
    session.install("-c", "constraints.txt", "-e", ".")
    session.run("kafkatest", "demo", *session.posargs)


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
    session.run("python", "-m", "kafkatest.emulator.fuzz", *session.posargs)
