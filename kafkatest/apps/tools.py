"""Run Apache Kafka's own command-line tools (topics, console producer, ...) from Python.

Kafka's Maven artifacts ship the tools' classes but not the ``bin/*.sh`` wrappers,
so this builds the ``java -cp ...`` command itself, from the jars kafkatest already
resolves for the `kafka` backend. Tool logging goes to stderr at WARN, which keeps
stdout to what the tool prints on purpose (records, tables) and still shows a
warning a test may want to assert is absent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from kafkatest.config import jvm_flags_for_tests
from kafkatest.errors import SetupError
from kafkatest.jars.class_archive import kafka_jvm_archive

#: Main classes of the tools in Kafka 4.x (kafka-tools jar), by their script names.
TOPICS = "org.apache.kafka.tools.TopicCommand"
CONSOLE_PRODUCER = "org.apache.kafka.tools.ConsoleProducer"
CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
TRANSACTIONS = "org.apache.kafka.tools.TransactionsCommand"

_QUIET_LOG4J2 = """\
status = error
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.stderr.ref = stderr
"""

#: Options the console tools renamed in Kafka 4.2 (KIP-1147): tool -> old name -> new
#: name. From 4.2 an old name still works but prints a deprecation notice on stdout,
#: among the records; before 4.2 the new names do not exist.
RENAMED_IN_4_2: dict[str, dict[str, str]] = {
    CONSOLE_CONSUMER: {
        "--property": "--formatter-property",
        "--consumer-property": "--command-property",
        "--consumer.config": "--command-config",
    },
    CONSOLE_PRODUCER: {
        "--property": "--reader-property",
        "--producer-property": "--command-property",
        "--producer.config": "--command-config",
    },
}


def tool_option(main_class: str, name: str, version: str | None = None) -> str:
    """`name` as the tools of `version` (default: the `kafka` backend's release) spell
    it, so a test's or a user's command reads the same on Kafka 3.9 and 4.3."""
    from kafkatest.jars.coordinates import kafka_version, release_tuple

    if release_tuple(version or kafka_version()) < (4, 2):
        return name
    return RENAMED_IN_4_2.get(main_class, {}).get(name, name)


#: A tool is a short-lived JVM: a small heap (and `jvm_flags_for_tests`) start it fastest.
_TOOL_HEAP = "-Xmx256m"


def kafka_tools_jars(version: str | None = None) -> list[Path]:
    """The jars of Apache Kafka's broker and tools (resolved once, then cached)."""
    from kafkatest.jars import kafka_broker_jars

    return kafka_broker_jars(version)


def kafka_tools_classpath(version: str | None = None) -> str:
    """The classpath of Apache Kafka's broker and tools (resolved once, then cached)."""
    return os.pathsep.join(str(jar) for jar in kafka_tools_jars(version))


def run_kafka_tool(
    main_class: str,
    args: Sequence[str],
    timeout_s: float = 60.0,
    input_text: str | None = None,
    version: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run one Kafka tool to completion and return its exit code, stdout and stderr.

    `input_text` is fed to stdin (the console producer reads records there); without
    it stdin is empty, so no tool waits for a terminal. A tool still running after
    `timeout_s` is killed and `subprocess.TimeoutExpired` raised, so no JVM outlives
    the call. The exit code is not checked: a test may expect a tool to fail. The tools
    share one class-data-sharing archive (`KAFKATEST_KAFKA_CDS`), which halves a run.
    """
    java = shutil.which("java")
    if java is None:
        raise SetupError("Kafka's tools run on the JVM and Java is not on PATH: install JDK 17+")
    jars = kafka_tools_jars(version)
    flags = (_TOOL_HEAP, *jvm_flags_for_tests())
    archive = kafka_jvm_archive("tools", version, java, flags, jars)
    with tempfile.TemporaryDirectory(prefix="kafkatest-tool-") as workdir:
        log_config = Path(workdir) / "log4j2.properties"
        log_config.write_text(_QUIET_LOG4J2)
        command = [
            java,
            *flags,
            *archive.java_options,
            f"-Dlog4j2.configurationFile={log_config}",
            "-cp",
            os.pathsep.join(str(jar) for jar in jars),
            main_class,
            *args,
        ]
        try:
            return subprocess.run(
                command,
                input=input_text if input_text is not None else "",
                capture_output=True,
                text=True,
                timeout=timeout_s,
                cwd=workdir,
                check=False,
            )
        finally:
            archive.exited()
