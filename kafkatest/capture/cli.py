"""``kafkatest capture``: a sample of topics from any cluster, as a file `seed` replays."""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaException

from kafkatest.capture.anonymize import Anonymizer, field_paths, parse_rule
from kafkatest.capture.ranges import CaptureError, Selection
from kafkatest.capture.reader import Capture, Limits, tty_progress
from kafkatest.capture.values import value_of
from kafkatest.security_names import MECHANISMS, PROTOCOLS
from kafkatest.seeding.capture_file import open_output

PASSWORD_ENV = "KAFKATEST_SASL_PASSWORD"


def add_capture_parser(commands: Any) -> None:
    """The ``capture`` subcommand, for `kafkatest.cli`."""
    parser = commands.add_parser(
        "capture",
        help="read a sample of topics (read-only) into a file that seed() replays",
        description=(
            "Read records from a cluster into a capture file (docs/how-to/capture.md): partitions "
            "are assigned, never joined, and no offset is committed. Ranges are half-open."
        ),
    )
    parser.add_argument("--bootstrap", required=True, help="host:port[,host:port]")
    parser.add_argument("--topic", action="append", required=True, help="repeatable")
    where = parser.add_argument_group("security (as the harness's brokers take it)")
    where.add_argument("--security-protocol", default="PLAINTEXT", help=", ".join(PROTOCOLS))
    where.add_argument("--sasl-mechanism", default=None, help=", ".join(MECHANISMS))
    where.add_argument("--sasl-username", default=None)
    where.add_argument(
        "--sasl-password", default=None, help=f"(better: the {PASSWORD_ENV} variable)"
    )
    where.add_argument("--ca-file", default=None, help="PEM CA to trust (TLS)")
    where.add_argument("--cert-file", default=None, help="client certificate (mutual TLS)")
    where.add_argument("--key-file", default=None, help="client key (mutual TLS)")
    where.add_argument(
        "-X", dest="extra", action="append", default=[], help="librdkafka key=value, repeatable"
    )
    where.add_argument("--schema-registry", default=None, help="URL; schemas go into the file")
    what = parser.add_argument_group("which records")
    what.add_argument("--from", dest="start", default="earliest", help="earliest, latest-N, JSON")
    what.add_argument("--to", dest="end", default=None, help="latest (default) or JSON")
    what.add_argument("--since", default=None, help="epoch ms or ISO time")
    what.add_argument("--until", default=None, help="epoch ms or ISO time")
    what.add_argument("--group", default=None, help="around this group's committed offsets")
    what.add_argument("--before", type=int, default=0, help="records before the commit")
    what.add_argument("--after", type=int, default=0, help="records from the commit on")
    what.add_argument("--max-records", type=int, default=None)
    what.add_argument("--max-bytes", type=int, default=None)
    private = parser.add_argument_group("personal data")
    private.add_argument(
        "--anonymize",
        action="append",
        default=[],
        metavar="FIELD=RULE",
        help="hash, drop, keep or fake:<provider>; FIELD: a.b, key, key.a, header:NAME",
    )
    private.add_argument("--salt", default=None, help="the same salt, the same replacements")
    private.add_argument(
        "--list-fields",
        action="store_true",
        help="list the fields found and their rule; write nothing",
    )
    parser.add_argument("-o", "--output", default=None, help="file (.gz: compressed) or -")
    parser.set_defaults(run=run_capture)


def client_config(args: argparse.Namespace) -> dict[str, Any]:
    """librdkafka settings from the command line (the password from the environment first)."""
    config: dict[str, Any] = {
        "bootstrap.servers": args.bootstrap,
        "security.protocol": args.security_protocol.upper(),
    }
    if args.sasl_mechanism:
        password = os.environ.get(PASSWORD_ENV, args.sasl_password)
        if not args.sasl_username or password is None:
            raise CaptureError(
                f"--sasl-mechanism needs --sasl-username and a password ({PASSWORD_ENV})"
            )
        config.update(
            {
                "sasl.mechanism": args.sasl_mechanism.upper(),
                "sasl.username": args.sasl_username,
                "sasl.password": password,
            }
        )
    for option, key in (
        ("ca_file", "ssl.ca.location"),
        ("cert_file", "ssl.certificate.location"),
        ("key_file", "ssl.key.location"),
    ):
        if getattr(args, option):
            config[key] = getattr(args, option)
    for item in args.extra:
        key, sep, value = item.partition("=")
        if not sep:
            raise CaptureError(f"-X {item!r}: give key=value")
        config[key] = value
    return config


def run_capture(args: argparse.Namespace) -> int:
    if not args.list_fields and args.output is None:
        raise CaptureError("give -o FILE (or -o - for standard output), or --list-fields")
    if args.output not in (None, "-"):
        folder = Path(args.output).absolute().parent
        if not folder.is_dir():
            raise CaptureError(f"-o {args.output}: there is no folder {folder}; create it first")
    for option in ("before", "after", "max_records", "max_bytes"):
        value = getattr(args, option)
        if value is not None and value < 0:
            raise CaptureError(f"--{option.replace('_', '-')} cannot be negative ({value})")
    try:
        return _capture(args)
    except KafkaException as exc:
        # librdkafka's own words: a setting it does not know (-X), a cluster it cannot
        # reach (--bootstrap), a refusal (ACLs, TLS).
        raise CaptureError(f"{_kafka_reason(exc)} (bootstrap {args.bootstrap})") from None
    except OSError as exc:
        raise CaptureError(f"-o {args.output}: {exc.strerror or exc}") from None


def _kafka_reason(exc: KafkaException) -> str:
    error = exc.args[0] if exc.args else exc
    text = error.str() if hasattr(error, "str") else str(error)
    return f"the Kafka client failed: {text}"


def _capture(args: argparse.Namespace) -> int:
    try:
        rules = [parse_rule(spec) for spec in args.anonymize]
    except ValueError as exc:
        raise CaptureError(str(exc)) from None
    salt = (args.salt or secrets.token_hex(16)).encode()
    registry = None
    if args.schema_registry:
        from kafkatest._ground.lean_imports import import_schema_registry_client

        import_schema_registry_client()
        from confluent_kafka.schema_registry import SchemaRegistryClient

        registry = SchemaRegistryClient({"url": args.schema_registry})
    capture = Capture(
        client_config(args),
        list(dict.fromkeys(args.topic)),
        Selection(
            args.start, args.end, args.since, args.until, args.group, args.before, args.after
        ),
        Limits(args.max_records, args.max_bytes),
        Anonymizer(rules, salt),
        registry,
        tty_progress() if args.output != "-" else None,
    )
    if args.list_fields:
        return _list_fields(capture)
    with open_output(args.output) as out:
        summary = capture.run(out)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print(summary.text(), file=sys.stderr)
    return 0


def _list_fields(capture: Capture) -> int:
    """Each field path seen, how many records had it, and the rule it gets (no values)."""
    seen: dict[str, int] = {}

    def visit(entry: dict[str, Any]) -> None:
        paths = {"value." + ".".join(p) for p in field_paths(value_of(entry["value"])) if p}
        paths |= {"key" + "".join("." + s for s in p) for p in field_paths(value_of(entry["key"]))}
        paths |= {f"header:{name}" for name, _ in entry["headers"]}
        for path in paths:
            seen[path] = seen.get(path, 0) + 1

    rules = {r.field: r.text for r in capture.anonymizer.rules}
    capture.anonymizer.rules = []  # the review shows the fields as they are named at source
    summary = capture.run(None, visit)
    print(f"{'field':40} {'records':>8}  rule")
    for path in sorted(seen):
        name = path.removeprefix("value.")
        print(f"{name:40} {seen[path]:>8}  {rules.get(name, '(kept)')}")
    print(f"({summary.total} records read; nothing written)")
    return 0
