"""`python -m kafkatest.apps.fuzz [--frames N] [--connections C] [--seed S] [--acls] [--sasl]`."""

from __future__ import annotations

import argparse
import sys

from kafkatest.apps.fuzz.run import run_fuzz


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kafkatest.apps.fuzz",
        description="Fuzz the emulator's wire side with mutated client frames.",
    )
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--max-seconds", type=float, default=float("inf"), help="stop early after this long"
    )
    parser.add_argument(
        "--acls",
        action="store_true",
        help="fuzz an emulator that authorizes with ACLs (part of the corpus allowed)",
    )
    parser.add_argument(
        "--sasl",
        action="store_true",
        help="fuzz a SASL_PLAINTEXT listener before authentication (handshakes, tokens)",
    )
    args = parser.parse_args(argv)
    report = run_fuzz(
        args.frames,
        args.connections,
        args.seed,
        max_seconds=args.max_seconds,
        acls=args.acls,
        sasl=args.sasl,
        log=lambda text: print(text, file=sys.stderr, flush=True),
    )
    print("\n".join(report.lines()))
    failed = report.crashes or report.hangs or report.handler_exceptions
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
