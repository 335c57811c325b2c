"""The `kafkatest` command: demo, jar resolution, the standalone emulator and its faults."""

from __future__ import annotations

import argparse
import sys

from kafkatest.errors import KafkaTestError


def _jars(args: argparse.Namespace) -> int:
    from kafkatest.jars import kafka_broker_jars, spark_connector_jars

    jars = (
        spark_connector_jars() if args.which == "spark" else kafka_broker_jars(args.kafka_version)
    )
    for jar in jars:
        print(jar)
    return 0


def _demo(args: argparse.Namespace) -> int:
    from kafkatest.apps.demo import run_demo

    return run_demo(args.backend, args.records, args.job)


def _emulator(args: argparse.Namespace) -> int:
    from kafkatest.apps.standalone import run_from_args

    return run_from_args(args)


def _schema_registry(args: argparse.Namespace) -> int:
    from kafkatest.schema_registry import SchemaRegistryServer

    server = SchemaRegistryServer(port=args.port, host=args.host)
    print(f"schema registry on {server.url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


def _bench(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from kafkatest.bench import run_bench
    from kafkatest.bench.processes import BENCH_BROKERS

    backends = tuple(name.strip() for name in args.backends.split(",") if name.strip())
    unknown = sorted(set(backends) - set(BENCH_BROKERS))
    if unknown or not backends:
        print(
            f"kafkatest bench: --backends takes emulator and/or kafka, not {args.backends!r}",
            file=sys.stderr,
        )
        return 2
    result = run_bench(
        Path(args.json) if args.json else None,
        args.records,
        args.spark_records,
        backends=backends,
        contention=not args.no_contention,
        spark_start=not args.no_spark_start,
        streaming_runs=args.streaming_runs,
        oracle_runs=0 if args.no_oracles else args.oracle_runs,
    )
    print(json.dumps(result, indent=2))
    return 0


def _spark_server(args: argparse.Namespace) -> int:
    from kafkatest.spark.server import running_server, start_server, stop_server

    if args.action == "start":
        from kafkatest._ground.project_files import project_ini
        from kafkatest.config import Config

        # The project's spark_extras (environment, then the pytest ini here), as its
        # pytest runs would load them.
        extras = Config.build(ini=project_ini()).spark_extras
        state = start_server(args.port, extras)
        print(f"Spark Connect server (pid {state.pid}) at {state.address}; log {state.log}")
        if state.extras:
            print(f"with the Spark extras: {', '.join(state.extras)}")
    elif args.action == "stop":
        stopped = stop_server()
        print(f"stopped the server (pid {stopped.pid})" if stopped else "no server was running")
    else:
        running = running_server()
        if running is None:
            print("not running (kafkatest spark-server start)")
            return 1
        loaded = f"; extras: {', '.join(running.extras)}" if running.extras else ""
        print(
            f"running: pid {running.pid} at {running.address} (PySpark {running.pyspark}{loaded})"
        )
    return 0


def _pytest_server(args: argparse.Namespace) -> int:
    from kafkatest.apps.pytest_forkserver import running_servers, stop_servers

    if args.action == "stop":
        stopped = stop_servers()
        print(f"stopped {len(stopped)} fork server(s)" if stopped else "no fork server was running")
        return 0
    servers = running_servers()
    for server in servers:
        print(f"running: pid {server['pid']} for {server['python']} at {server['socket']}")
    if not servers:
        print("not running (the next `kafkatest pytest` starts one)")
    return 0 if servers else 1


def _doctor(args: argparse.Namespace) -> int:
    from kafkatest.apps.doctor import run_doctor

    return run_doctor(resolve=args.resolve)


def _repro(args: argparse.Namespace) -> int:
    from kafkatest.scenarios.repro import run_repro

    return run_repro(args.file, args.backend, args.bootstrap, args.trust)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafkatest", description="Test PySpark jobs that read from and write to Kafka."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="seed a topic, run the sample job, check the sink")
    demo.add_argument("--backend", default=None, help="emulator, kafka, container or external")
    demo.add_argument("--records", type=int, default=1000, help="orders to seed (default 1000)")
    demo.add_argument("--job", default=None, help="job module to run instead of the sample")
    demo.set_defaults(run=_demo)

    repro = commands.add_parser(
        "repro",
        help="replay a saved fault scenario; exit 1 if it fails",
        description=(
            "Replay a saved fault scenario on a broker of its own; exit 0 when its "
            "expectations held, 1 when not. A scenario file is code: it names a job (a Python "
            "function) that repro imports and runs with your permissions. Only jobs in the "
            "scenario file's directory, the current directory or kafkatest's own sample jobs "
            "run unasked; run a file from anywhere else only after reading it, with --trust."
        ),
    )
    repro.add_argument("file", help="scenario file (YAML or JSON); it runs the job it names")
    repro.add_argument(
        "--trust",
        action="store_true",
        help="run the file's job even if it lives outside the file's directory and the "
        "current project (only for files you have read)",
    )
    repro.add_argument("--backend", default=None, help="emulator, kafka, container or external")
    repro.add_argument("--bootstrap", default=None, help="host:port for --backend external")
    repro.set_defaults(run=_repro)

    doctor = commands.add_parser(
        "doctor", help="check Java, PySpark, the jar cache, Maven and ports; say what to fix"
    )
    doctor.add_argument(
        "--resolve", action="store_true", help="download the jars that are not cached yet"
    )
    doctor.set_defaults(run=_doctor)

    server = commands.add_parser(
        "spark-server",
        help="a Spark Connect server with the connector that pytest runs reuse (warm mode)",
    )
    server.add_argument("action", choices=["start", "stop", "status"])
    server.add_argument("--port", type=int, default=None, help="gRPC port (default: a free one)")
    server.set_defaults(run=_spark_server)

    forked = commands.add_parser(
        "pytest",
        help="run pytest forked from a process that has imported it, its plugins and "
        "PySpark's Connect client (a one-test re-run in about half the time); "
        "every argument after it is pytest's",
        add_help=False,
    )
    # Never parsed here (main() hands them to pytest untouched): listed for --help.
    forked.add_argument(
        "pytest_args", nargs=argparse.REMAINDER, help="pytest's own arguments and options"
    )
    forkserver = commands.add_parser(
        "pytest-server", help="the fork servers of `kafkatest pytest`: status, stop"
    )
    forkserver.add_argument("action", choices=["status", "stop"])
    forkserver.set_defaults(run=_pytest_server)

    jars = commands.add_parser("jars", help="print resolved jar paths, one per line")
    jars.add_argument("which", choices=["spark", "kafka"])
    jars.add_argument("--kafka-version", default=None, help="Apache Kafka release (for 'kafka')")
    jars.set_defaults(run=_jars)

    emulator = commands.add_parser("emulator", help="run the Kafka emulator until interrupted")
    from kafkatest.apps.standalone import add_emulator_arguments

    add_emulator_arguments(emulator)
    emulator.set_defaults(run=_emulator)

    registry = commands.add_parser(
        "schema-registry",
        help="run an embedded Confluent-compatible Schema Registry until interrupted",
    )
    registry.add_argument("--host", default="127.0.0.1")
    registry.add_argument("--port", type=int, default=8081)
    registry.set_defaults(run=_schema_registry)

    from kafkatest.faults.cli import add_fault_parser

    add_fault_parser(commands)
    from kafkatest.capture.cli import add_capture_parser

    add_capture_parser(commands)

    bench = commands.add_parser("bench", help="measure the emulator and real Kafka side by side")
    bench.add_argument("--json", default=None, help="write the figures to this file")
    bench.add_argument("--records", type=int, default=200_000)
    bench.add_argument("--spark-records", type=int, default=1_000_000)
    bench.add_argument(
        "--backends", default="emulator,kafka", help="comma-separated (default: both)"
    )
    bench.add_argument(
        "--no-contention", action="store_true", help="skip the run pinned to one core"
    )
    bench.add_argument(
        "--streaming-runs", type=int, default=5, help="runs of each streaming test (median)"
    )
    bench.add_argument(
        "--no-spark-start", action="store_true", help="skip SparkSession start (cold, warm)"
    )
    bench.add_argument(
        "--no-oracles", action="store_true", help="skip the oracles' cost (oracles_x)"
    )
    bench.add_argument(
        "--oracle-runs", type=int, default=3, help="runs of the oracles' cost (median)"
    )
    bench.set_defaults(run=_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    try:
        if given[:1] == ["pytest"]:  # everything after it is pytest's, untouched by argparse
            from kafkatest.apps.pytest_forkserver import run

            return run(given[1:])
        args = build_parser().parse_args(argv)
        return int(args.run(args))
    except KafkaTestError as exc:
        print(f"kafkatest: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kafkatest: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
