"""`kafkatest emulator`: serve the emulator on fixed ports until interrupted.

For pointing a local Spark shell, a notebook or any Kafka client at an emulated
cluster outside pytest. Broker i listens on port + i. With a control port, the
fault API is served on loopback too (see `kafkatest.apps.control_server`), so
suites outside pytest can inject the same faults through `kafkatest fault`.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Sequence

from kafkatest._ground.exposure import ExposedEmulatorWarning, exposure_warning
from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.errors import BrokerError
from kafkatest.security import ADMIN_USER, MECHANISMS, PROTOCOLS, Security
from kafkatest.security.tls import TRUSTSTORE_PASSWORD

LOOPBACK = "127.0.0.1"


def run_standalone(
    host: str,
    port: int,
    brokers: int,
    control_port: int | None = None,
    control_host: str = LOOPBACK,
    security: Security | None = None,
    timings: bool = False,
    acls: bool = False,
    super_users: Iterable[str] = (),
    prepare: Callable[[EmulatorBroker], None] | None = None,
) -> int:
    """Serve until SIGINT/SIGTERM; the exit status (non-zero if it could not listen).

    With `timings`, every request's phases are recorded and printed at the end; with
    `acls`, Kafka's authorizer decides (`super_users` bypass it); `prepare` runs on the
    started broker before its address is printed (the fuzzer grants ACLs there)."""
    if brokers < 1:
        print("kafkatest emulator: --brokers must be at least 1", file=sys.stderr)
        return 2
    for address, what in ((host, "the emulator"), (control_host, "its fault control")):
        if what == "the emulator" or control_port is not None:
            warning = exposure_warning(address, what)
            if warning is not None:
                print(f"kafkatest emulator: {warning}", file=sys.stderr, flush=True)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with warnings.catch_warnings():  # printed above, in the command's own words
        warnings.simplefilter("ignore", ExposedEmulatorWarning)
        broker = EmulatorBroker(
            brokers, host, port, security=security, acls=acls, super_users=super_users
        )
    recorded = broker.record_timings() if timings else None
    control = None
    try:
        try:
            broker.start()
        except BrokerError as exc:
            print(f"kafkatest emulator: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
            return 1
        if control_port is not None:
            from kafkatest.apps.control_server import ControlServer
            from kafkatest.faults import faults_for

            try:
                control = ControlServer(faults_for(broker), control_port, control_host)
            except OSError as exc:
                print(
                    f"kafkatest emulator: cannot serve control on "
                    f"{control_host}:{control_port}: {exc}",
                    file=sys.stderr,
                )
                return 1
            control.start()
        if prepare is not None:
            prepare(broker)
        print(f"kafkatest emulator: bootstrap servers {broker.bootstrap_servers}", flush=True)
        if broker.security_runtime is not None:
            _print_security(broker)
        if acls:
            who = ", ".join(super_users) or "none (no client can manage ACLs)"
            print(
                f"kafkatest emulator: ACLs on (a resource without ACLs is denied); "
                f"super users: {who}",
                flush=True,
            )
        if control is not None:
            print(f"kafkatest emulator: fault control http://{control.address}/faults", flush=True)
        stop.wait()
    finally:
        if control is not None:
            control.close()
        broker.close()
    if recorded is not None:
        print("kafkatest emulator: request timings (seconds; longest in ms)", flush=True)
        for line in recorded.summary():
            print(f"  {line}", flush=True)
    print("kafkatest emulator: stopped", flush=True)
    return 0


def add_emulator_arguments(parser: argparse.ArgumentParser) -> None:
    """The one command line of the standalone emulator: `kafkatest emulator` and
    `python -m kafkatest.emulator` are both made from it."""
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=9092, help="port of the first broker")
    parser.add_argument("--brokers", type=int, default=1, help="number of brokers")
    add_control_options(parser)
    add_security_options(parser)
    add_timing_option(parser)
    parser.add_argument("--verbose", action="store_true", help="log every refused request")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="kafkatest emulator", description="Run the in-memory Kafka emulator."
    )
    add_emulator_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    return run_from_args(args)


def run_from_args(
    args: argparse.Namespace, prepare: Callable[[EmulatorBroker], None] | None = None
) -> int:
    """Serve what `add_emulator_arguments`' flags ask for, until interrupted (`prepare`
    as `run_standalone` takes it)."""
    if args.verbose:
        logging.basicConfig(level=logging.INFO)
    return run_standalone(
        args.host,
        args.port,
        args.brokers,
        args.control_port,
        args.control_host,
        security_from_args(args),
        args.timings,
        args.acls,
        args.super_user,
        prepare,
    )


def _print_security(broker: EmulatorBroker) -> None:
    """What a client needs to know: the protocol, the mechanisms, the CA's files."""
    runtime = broker.security_runtime
    assert runtime is not None
    security = runtime.security
    line = f"kafkatest emulator: security.protocol={security.protocol}"
    if security.sasl:
        users = ", ".join(u for u in security.users if u != ADMIN_USER) or "none"
        line += f" sasl.mechanisms={','.join(security.mechanisms)} users: {users}"
    if security.client_auth != "none":
        line += f" ssl.client.auth={security.client_auth}"
    print(line, flush=True)
    if runtime.ca is not None:
        print(
            f"kafkatest emulator: CA {runtime.ca.ca_pem} (librdkafka ssl.ca.location; JVM "
            f"ssl.truststore.type=PEM) and {runtime.ca.truststore_p12} (JVM PKCS12 "
            f"truststore, password {TRUSTSTORE_PASSWORD})",
            flush=True,
        )


def add_security_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--security-protocol",
        default="PLAINTEXT",
        type=str.upper,
        choices=PROTOCOLS,
        help="the listener's security.protocol (default PLAINTEXT)",
    )
    parser.add_argument(
        "--sasl-mechanism",
        action="append",
        type=str.upper,
        choices=MECHANISMS,
        help="an enabled SASL mechanism (repeatable; default PLAIN)",
    )
    parser.add_argument(
        "--user",
        action="append",
        default=[],
        metavar="NAME:PASSWORD",
        help="a user who may log in over SASL (repeatable)",
    )
    parser.add_argument(
        "--tls-dir",
        default=None,
        help="directory for the CA and certificates of an SSL/SASL_SSL listener (ca.pem, "
        "truststore.p12); default a temporary directory",
    )
    parser.add_argument(
        "--ssl-client-auth",
        default="none",
        choices=("none", "requested", "required"),
        help="mutual TLS: ask clients for a certificate (principal = its subject)",
    )
    parser.add_argument(
        "--acls",
        action="store_true",
        help="authorize every request with ACLs, as Kafka's StandardAuthorizer (a resource "
        "without ACLs is denied); give a --super-user to manage them",
    )
    parser.add_argument(
        "--super-user",
        action="append",
        default=[],
        metavar="PRINCIPAL",
        help="a principal that bypasses ACLs, e.g. User:admin (repeatable; Kafka's super.users)",
    )


def security_from_args(args: argparse.Namespace) -> Security | None:
    """The `Security` the flags ask for; exits with a usage message when they disagree."""
    for principal in args.super_user:
        if not args.acls:
            raise SystemExit("kafkatest emulator: --super-user needs --acls")
        kind, sep, name = principal.partition(":")
        if not sep or not kind or not name:
            raise SystemExit(
                f"kafkatest emulator: --super-user expects a principal like User:admin, "
                f"got {principal!r}"
            )
    if args.security_protocol == "PLAINTEXT" and not (args.user or args.sasl_mechanism):
        return None
    users: dict[str, str] = {}
    for entry in args.user:
        name, sep, password = entry.partition(":")
        if not sep or not name or not password:
            raise SystemExit(f"kafkatest emulator: --user expects NAME:PASSWORD, got {entry!r}")
        users[name] = password
    try:
        return Security.of(
            args.security_protocol,
            args.sasl_mechanism,
            users,
            client_auth=args.ssl_client_auth,
            tls_dir=args.tls_dir,
        )
    except BrokerError as exc:
        raise SystemExit(f"kafkatest emulator: {exc}") from None


def add_timing_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timings",
        action="store_true",
        help="record where each request's time goes (queued, handled, written, and the "
        "client's idle time) and print it per API key when stopped",
    )


def add_control_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--control-port", type=int, default=None, help="serve fault control on PORT (HTTP, JSON)"
    )
    parser.add_argument(
        "--control-host",
        default=LOOPBACK,
        help="address of the fault control (default 127.0.0.1; anything else is reachable "
        "by others, who could then inject faults)",
    )


if __name__ == "__main__":
    sys.exit(main())
