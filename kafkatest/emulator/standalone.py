"""`kafkatest emulator`: serve the emulator on fixed ports until interrupted.

For pointing a local Spark shell, a notebook or any Kafka client at an emulated
cluster outside pytest. Broker i listens on port + i.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Sequence

from kafkatest.emulator.server import EmulatorServer
from kafkatest.emulator.state import EmulatorState


async def _serve(host: str, port: int, brokers: int) -> None:
    state = EmulatorState(brokers)
    server = EmulatorServer(state, host, port)
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    print(f"kafkatest emulator: bootstrap servers {server.bootstrap_servers}", flush=True)
    try:
        await stop.wait()
    finally:
        await server.stop()
        print("kafkatest emulator: stopped", flush=True)


def run_standalone(host: str, port: int, brokers: int) -> int:
    """Serve until SIGINT/SIGTERM; the exit status (non-zero if it could not listen)."""
    if brokers < 1:
        print("kafkatest emulator: --brokers must be at least 1", file=sys.stderr)
        return 2
    try:
        asyncio.run(_serve(host, port, brokers))
    except OSError as exc:
        print(f"kafkatest emulator: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="kafkatest emulator", description="Run the in-memory Kafka emulator."
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=9092, help="port of the first broker")
    parser.add_argument("--brokers", type=int, default=1, help="number of brokers")
    parser.add_argument("--verbose", action="store_true", help="log every refused request")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    return run_standalone(args.host, args.port, args.brokers)
