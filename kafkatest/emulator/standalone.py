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
from collections.abc import Sequence

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.errors import BrokerError


def run_standalone(host: str, port: int, brokers: int, control_port: int | None = None) -> int:
    """Serve until SIGINT/SIGTERM; the exit status (non-zero if it could not listen)."""
    if brokers < 1:
        print("kafkatest emulator: --brokers must be at least 1", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
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
                control = ControlServer(faults_for(broker), control_port)
            except OSError as exc:
                print(
                    f"kafkatest emulator: cannot serve control on {control_port}: {exc}",
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
    parser.add_argument(
        "--control-port", type=int, default=None, help="serve fault control on 127.0.0.1:PORT"
    )
    parser.add_argument("--verbose", action="store_true", help="log every refused request")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    return run_standalone(args.host, args.port, args.brokers, args.control_port)
