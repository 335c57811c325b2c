"""`kafkatest emulator`: serve the emulator on fixed ports until interrupted.

For pointing a local Spark shell, a notebook or any Kafka client at an emulated
cluster outside pytest. Broker i listens on port + i. With a control port, the
fault API is served on loopback too (see `kafkatest.faults.control_server`), so
suites outside pytest can inject the same faults through `kafkatest fault`.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import warnings
from collections.abc import Sequence

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.emulator.exposure import ExposedEmulatorWarning, exposure_warning
from kafkatest.errors import BrokerError

LOOPBACK = "127.0.0.1"


def run_standalone(
    host: str,
    port: int,
    brokers: int,
    control_port: int | None = None,
    control_host: str = LOOPBACK,
) -> int:
    """Serve until SIGINT/SIGTERM; the exit status (non-zero if it could not listen)."""
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
        broker = EmulatorBroker(brokers, host, port)
    control = None
    try:
        try:
            broker.start()
        except BrokerError as exc:
            print(f"kafkatest emulator: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
            return 1
        if control_port is not None:
            from kafkatest.faults import faults_for
            from kafkatest.faults.control_server import ControlServer

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
        print(f"kafkatest emulator: bootstrap servers {broker.bootstrap_servers}", flush=True)
        if control is not None:
            print(f"kafkatest emulator: fault control http://{control.address}/faults", flush=True)
        stop.wait()
    finally:
        if control is not None:
            control.close()
        broker.close()
    print("kafkatest emulator: stopped", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="kafkatest emulator", description="Run the in-memory Kafka emulator."
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=9092, help="port of the first broker")
    parser.add_argument("--brokers", type=int, default=1, help="number of brokers")
    add_control_options(parser)
    parser.add_argument("--verbose", action="store_true", help="log every refused request")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    return run_standalone(args.host, args.port, args.brokers, args.control_port, args.control_host)


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
