"""Developer sessions: `nox -s tests`, `nox -s demo`, `nox -s lint`, `nox -s conformance`."""

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
