"""Hold client libraries' own integration suites against both brokers.

- franz-go's `pkg/kgo` tests (groups, transactions, KIP-848 regexes, fetch edge
  cases, SCRAM), fetched from the Go module proxy at a pinned version; run with a
  plaintext broker for KGO_SEEDS and a SASL/SCRAM-SHA-256 one for the SCRAM tests.
- librdkafka's own test suite (`tests/`, the C test runner confluent-kafka and
  every librdkafka binding rest on), from the librdkafka source that the npm package
  node-rdkafka bundles at a pinned version, built without TLS; its broker tests in
  quick mode (`-L -Q -E`: no local-only tests, no socket-emulation tests) against a
  three-broker cluster of each backend.

- confluent-kafka-python's `tests/integration` (admin, consumer, producer with
  transactions, Schema Registry serializers, share consumers), in a virtualenv of
  its own with its test requirements, pointed at a three-broker cluster (BROKERS)
  and at kafkatest's embedded Schema Registry (SR_URL), as its bring-your-own-
  cluster mode allows. The tests come from CONFLUENT_KAFKA_PYTHON_SRC (a checkout)
  or a clone of the release tag matching the installed confluent-kafka.

- Apache Kafka's own integration tests on its @ClusterTest harness (the tools' and
  the broker's test jars from Maven Central), with kafkatest's stand-in for the
  harness's JUnit extension (`kafka_java/`) pointing each test at a running broker.

`nox -s client_suites [-- franz-go|librdkafka|confluent-kafka-python|kafka-java]` builds each suite once, runs it
against the emulator and against real Kafka, prints each backend's counts and every
test whose outcome differs, and fails when a test that passes on Kafka does not pass
on the emulator. `KAFKA_JAVA_CLASSES=DescribeConsumerGroupTest` limits kafka-java to
the classes whose name matches.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from kafkatest import start_broker

FRANZ_GO = "github.com/twmb/franz-go@v1.22.2"
SCRAM_USER, SCRAM_PASSWORD = "kgo", "kgo-secret"
#: One top-level outcome line of `go test -v` (subtests are indented).
OUTCOME = re.compile(r"^--- (PASS|FAIL|SKIP): (\S+) \(")


def build(workdir: Path) -> Path:
    """The kgo test binary, built from the module proxy's copy of franz-go."""
    listing = subprocess.run(
        ["go", "mod", "download", "-json", FRANZ_GO],
        check=True,
        capture_output=True,
        text=True,
        cwd=workdir,
    )
    source = workdir / "franz-go"
    shutil.copytree(json.loads(listing.stdout)["Dir"], source)
    for path in source.rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    binary = workdir / "kgo.test"
    subprocess.run(["go", "test", "-c", "-o", str(binary), "./pkg/kgo"], check=True, cwd=source)
    return binary


def run_suite(binary: Path, backend: str, log: Path) -> dict[str, str]:
    """{test name: PASS | FAIL | SKIP} of one run against `backend`."""
    with ExitStack() as stack:
        plain = stack.enter_context(start_broker(backend))
        scram = stack.enter_context(
            start_broker(
                backend,
                security_protocol="SASL_PLAINTEXT",
                sasl_mechanisms=["SCRAM-SHA-256"],
                users={SCRAM_USER: SCRAM_PASSWORD},
            )
        )
        env = {
            **os.environ,
            "KGO_SEEDS": plain.bootstrap_servers,
            "KGO_TEST_RF": "1",
            "KGO_TEST_RECORDS": "10000",
            "KGO_TEST_SCRAM": f"{SCRAM_USER}:{SCRAM_PASSWORD}",
            "KGO_TEST_SCRAM_SEEDS": scram.bootstrap_servers,
        }
        started = time.monotonic()
        with log.open("w") as out:
            subprocess.run(
                [str(binary), "-test.v", "-test.count=1", "-test.timeout=20m"],
                cwd=binary.parent / "franz-go" / "pkg" / "kgo",
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                check=False,
            )
        print(f"{backend}: {time.monotonic() - started:.0f} s, log {log}")
    outcomes: dict[str, str] = {}
    for line in log.read_text(errors="replace").splitlines():
        match = OUTCOME.match(line)
        if match:
            outcomes[match.group(2)] = match.group(1)
    return outcomes


#: The librdkafka release node-rdkafka 3.6.1 bundles (with its tests/ directory).
NODE_RDKAFKA = "node-rdkafka@3.6.1"
LIBRDKAFKA_VERSION = "2.12.0"


def build_librdkafka(workdir: Path) -> Path:
    """librdkafka's test runner, built from node-rdkafka's bundled source (npm)."""
    subprocess.run(["npm", "pack", NODE_RDKAFKA], check=True, cwd=workdir, capture_output=True)
    tarball = next(workdir.glob("node-rdkafka-*.tgz"))
    subprocess.run(["tar", "xzf", tarball.name], check=True, cwd=workdir)
    source = workdir / "package" / "deps" / "librdkafka"
    disabled = ["--disable-ssl", "--disable-gssapi", "--disable-zstd", "--disable-curl"]
    subprocess.run(
        ["./configure", "--no-download", "--disable-lz4-ext", *disabled],
        check=True,
        cwd=source,
        capture_output=True,
    )
    jobs = f"-j{os.cpu_count() or 2}"
    subprocess.run(["make", jobs, "libs"], check=True, cwd=source, capture_output=True)
    subprocess.run(["make", jobs, "build"], check=True, cwd=source / "tests", capture_output=True)
    return source / "tests"


def run_librdkafka(tests: Path, backend: str, log: Path) -> dict[str, str]:
    """{test name: PASS | FAIL | SKIP} of librdkafka's broker tests against `backend`."""
    report = log.with_suffix(".json")
    # As librdkafka's own CI clusters: several brokers (its transaction tests want a
    # replication factor of 3) and auto-created topics with 4 partitions.
    with start_broker(backend, brokers=3, config={"num.partitions": 4}) as broker:
        conf = log.with_suffix(".conf")
        conf.write_text(
            f"metadata.broker.list={broker.bootstrap_servers}\n"
            "test.timeout.multiplier=3\n"
            "test.topic.random=true\n"
        )
        env = {
            **os.environ,
            "RDKAFKA_TEST_CONF": str(conf),
            "TEST_REPORT": str(report),
            # The runner links the freshly built shared libraries (as run-test.sh does).
            "LD_LIBRARY_PATH": f"{tests.parent / 'src'}:{tests.parent / 'src-cpp'}",
        }
        logged_run(["./test-runner", "-L", "-Q", "-E", "-p2", "-V", "4.1.1"], tests, env, log)
    states = {"PASSED": "PASS", "FAILED": "FAIL", "SKIPPED": "SKIP"}
    tests_run = json.loads(report.read_text()).get("tests", {})
    return {
        name: states.get(str(result.get("state")), str(result.get("state")))
        for name, result in tests_run.items()
        if name != "<MAIN>" and result.get("state") != "NOT_STARTED"
    }


def build_confluent_python(workdir: Path) -> Path:
    """A virtualenv with confluent-kafka-python's test requirements, and its tests."""
    from importlib.metadata import version as installed_version

    # (confluent_kafka.version() is a tuple in older releases and a string in 2.16.)
    version = installed_version("confluent-kafka")
    source = workdir / "confluent-kafka-python"
    given = os.environ.get("CONFLUENT_KAFKA_PYTHON_SRC")
    if given:
        shutil.copytree(Path(given) / "tests", source / "tests")
    else:
        url = "https://github.com/confluentinc/confluent-kafka-python"
        subprocess.run(
            ["git", "clone", "--depth", "1", "--branch", f"v{version}", url, str(source)],
            check=True,
        )
    venv = workdir / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    requirements = [
        f"confluent-kafka[avro,json,protobuf,schemaregistry]=={version}",
        "trivup",  # imported by its fixtures module even in bring-your-own mode
        "avro>=1.11.1,<2",
        "pytest",
        "pytest-timeout",
        "pytest-asyncio",
        "requests-mock",
        "respx",
        "attrs",
        "async-timeout",
    ]
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *requirements], check=True)
    return source


def run_confluent_python(source: Path, backend: str, log: Path) -> dict[str, str]:
    """{test id: PASS | FAIL | SKIP} of its integration tests against `backend`."""
    from kafkatest.schema_registry import start_schema_registry

    report = log.with_suffix(".xml")
    python = source.parent / "venv" / "bin" / "python"
    with (
        start_broker(backend, brokers=3, config={"num.partitions": 4}) as broker,
        start_schema_registry() as registry,
    ):
        env = {
            **os.environ,
            "BROKERS": broker.bootstrap_servers,
            "SR_URL": registry.url,
            "PYTHONPATH": str(source),
        }
        # CONFLUENT_KAFKA_PYTHON_TESTS=tests/integration/consumer runs a part of it.
        tests = os.environ.get("CONFLUENT_KAFKA_PYTHON_TESTS", "tests/integration")
        command = [str(python), "-m", "pytest", *tests.split(), "-p", "no:cacheprovider"]
        options = ["-q", "--timeout=300", "-o", "addopts=", "-o", "asyncio_mode=auto"]
        logged_run([*command, *options, f"--junitxml={report}"], source, env, log)
    return junit_outcomes(report)


#: Apache Kafka's own integration tests written on its @ClusterTest harness, compiled,
#: from the test jars Kafka publishes on Maven Central for this release.
KAFKA_JAVA_VERSION = "4.1.1"
KAFKA_TEST_JARS = ("kafka-tools", "kafka_2.13")
#: kafkatest's stand-in for the harness's JUnit extension (Java; see its header).
JAVA_HARNESS = Path(__file__).parent / "kafka_java"
JUNIT_CONSOLE = "org.junit.platform:junit-platform-console-standalone:1.13.1"
#: How many brokers the cluster has for tests that ask for more than one.
JAVA_CLUSTER_BROKERS = 3
JAVA_TEST_TIMEOUT_S = 120


def build_kafka_java(workdir: Path) -> Path:
    """A classpath file: the harness stand-in first, then Kafka's test jars and theirs."""
    from kafkatest.jars.maven import resolve

    kafka = f"org.apache.kafka:{{}}:{KAFKA_JAVA_VERSION}"
    coordinates = [
        *(kafka.format(name) for name in KAFKA_TEST_JARS),
        *(kafka.format(f"{name}:jar:test") for name in (*KAFKA_TEST_JARS, "kafka-clients")),
        kafka.format("kafka-server-common:jar:test"),
        kafka.format("kafka-storage:jar:test"),  # tiered-storage templates
        kafka.format("kafka-test-common-runtime"),
        kafka.format("kafka-test-common-internal-api"),
        JUNIT_CONSOLE,
        "org.mockito:mockito-core:5.14.2",
        "org.mockito:mockito-junit-jupiter:5.14.2",
    ]
    jars = [str(jar) for jar in resolve(coordinates)]
    classes = workdir / "classes"
    sources = [str(path) for path in JAVA_HARNESS.rglob("*.java")]
    javac = ["javac", "-nowarn", "-d", str(classes), "-cp", os.pathsep.join(jars)]
    subprocess.run([*javac, *sources], check=True)
    classpath = workdir / "classpath"
    classpath.write_text(os.pathsep.join([str(classes), *jars]))
    return classpath


def cluster_test_classes(classpath: Path) -> list[str]:
    """Test classes of Kafka's test jars that take a ClusterInstance; with
    KAFKA_JAVA_CLASSES set, only those whose name it matches (a regex searched in the
    full class name), to re-run one class on both brokers in minutes."""
    import zipfile

    wanted = re.compile(os.environ.get("KAFKA_JAVA_CLASSES", ""))
    names = []
    for jar in classpath.read_text().split(os.pathsep):
        if not re.search(r"/(kafka-tools|kafka_2\.13)-[\d.]+-test\.jar$", jar):
            continue
        with zipfile.ZipFile(jar) as archive:
            for entry in archive.namelist():
                if not entry.endswith("Test.class") or "$" in entry:
                    continue
                name = entry.removesuffix(".class").replace("/", ".")
                if not wanted.search(name):
                    continue
                if b"org/apache/kafka/common/test/ClusterInstance" in archive.read(entry):
                    names.append(name)
    return sorted(names)


def run_kafka_java(classpath: Path, backend: str, log: Path) -> dict[str, str]:
    """{class::test: PASS | FAIL | SKIP}, each test class on a fresh broker of `backend`."""
    reports = log.parent / f"reports-{backend}"
    outcomes: dict[str, str] = {}
    started = time.monotonic()
    with (
        log.open("w") as out,
        start_broker(backend, brokers=JAVA_CLUSTER_BROKERS) as cluster,
    ):
        for test_class in cluster_test_classes(classpath):
            with start_broker(backend) as broker:
                command = [
                    "java",
                    f"-Dkafkatest.bootstrap={broker.bootstrap_servers}",
                    f"-Dkafkatest.bootstrap.cluster={cluster.bootstrap_servers}",
                    f"-Dkafkatest.cluster.brokers={JAVA_CLUSTER_BROKERS}",
                    "-cp",
                    classpath.read_text(),
                    "org.junit.platform.console.ConsoleLauncher",
                    "execute",
                    "--disable-banner",
                    "--details=summary",
                    "--config=junit.jupiter.extensions.autodetection.enabled=true",
                    # Kafka's CI gives each test a timeout; a consumer waiting for a
                    # record that never comes must not stall the suite.
                    f"--config=junit.jupiter.execution.timeout.default={JAVA_TEST_TIMEOUT_S}s",
                    "--config=junit.jupiter.execution.timeout.thread.mode.default=SEPARATE_THREAD",
                    f"--select-class={test_class}",
                    f"--reports-dir={reports / test_class}",
                ]
                out.write(f"== {test_class}\n")
                out.flush()
                subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, timeout=1800)
            report = reports / test_class / "TEST-junit-jupiter.xml"
            if report.exists():
                outcomes.update(junit_outcomes(report))
            else:
                outcomes[f"{test_class}::(no report)"] = "FAIL"
    print(f"{log.stem}: {time.monotonic() - started:.0f} s, log {log}")
    return outcomes


def logged_run(command: list[str], cwd: Path, env: dict[str, str], log: Path) -> None:
    """Run one suite with its output in `log`, saying how long it took."""
    started = time.monotonic()
    with log.open("w") as out:
        subprocess.run(
            command,
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
            timeout=3600,
        )
    print(f"{log.stem}: {time.monotonic() - started:.0f} s, log {log}")


def junit_outcomes(report: Path) -> dict[str, str]:
    import xml.etree.ElementTree as ElementTree

    outcomes: dict[str, str] = {}
    for case in ElementTree.parse(report).iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        children = {child.tag for child in case}
        if children & {"failure", "error"}:
            outcomes[name] = "FAIL"
        elif "skipped" in children:
            outcomes[name] = "SKIP"
        else:
            outcomes[name] = "PASS"
    return outcomes


SUITES = {
    "franz-go": (f"franz-go {FRANZ_GO.split('@')[1]} pkg/kgo", build, run_suite),
    "librdkafka": (f"librdkafka {LIBRDKAFKA_VERSION} tests", build_librdkafka, run_librdkafka),
    "confluent-kafka-python": (
        "confluent-kafka-python tests/integration",
        build_confluent_python,
        run_confluent_python,
    ),
    "kafka-java": (
        f"Apache Kafka {KAFKA_JAVA_VERSION}'s @ClusterTest integration tests (Java clients)",
        build_kafka_java,
        run_kafka_java,
    ),
}


def main(names: list[str]) -> int:
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        print(f"unknown suite(s) {unknown}; choose from {sorted(SUITES)}")
        return 2
    failed = 0
    for name in names or list(SUITES):
        failed |= compare(name)
    return failed


def compare(name: str) -> int:
    title, build_suite, run = SUITES[name]
    workdir = Path(tempfile.mkdtemp(prefix=f"kafkatest-{name}-suite-"))
    runner = build_suite(workdir)
    results = {
        backend: run(runner, backend, workdir / f"{name}-{backend}.log")
        for backend in ("emulator", "kafka")
    }
    for backend, outcomes in results.items():
        counts = {
            status: list(outcomes.values()).count(status) for status in ("PASS", "FAIL", "SKIP")
        }
        print(f"{title} on {backend}: {counts}")
    names = sorted(set(results["emulator"]) | set(results["kafka"]))
    differ = [
        (name, results["emulator"].get(name, "-"), results["kafka"].get(name, "-"))
        for name in names
        if results["emulator"].get(name) != results["kafka"].get(name)
    ]
    for name, emulator, kafka in differ:
        print(f"  {name}: emulator {emulator}, kafka {kafka}")
    worse = [name for name, emulator, kafka in differ if kafka == "PASS" and emulator != "PASS"]
    if worse:
        print(f"passes on Kafka but not on the emulator: {', '.join(worse)}")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
