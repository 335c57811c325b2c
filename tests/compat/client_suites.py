"""Hold a client library's own integration suite against both brokers: franz-go's
`pkg/kgo` tests (groups, transactions, KIP-848 regexes, fetch edge cases, SCRAM).

`nox -s client_suites` runs it: the suite is fetched from the Go module proxy at a
pinned version, built once, then run against the emulator and against real Kafka
(each with a plaintext broker for KGO_SEEDS and a SASL/SCRAM-SHA-256 one for the
SCRAM tests). It prints each backend's counts and every test whose outcome differs,
and fails when a test that passes on Kafka does not pass on the emulator.
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


def main() -> int:
    workdir = Path(tempfile.mkdtemp(prefix="kafkatest-client-suites-"))
    binary = build(workdir)
    results = {
        backend: run_suite(binary, backend, workdir / f"kgo-{backend}.log")
        for backend in ("emulator", "kafka")
    }
    for backend, outcomes in results.items():
        counts = {
            status: list(outcomes.values()).count(status) for status in ("PASS", "FAIL", "SKIP")
        }
        print(f"franz-go {FRANZ_GO.split('@')[1]} pkg/kgo on {backend}: {counts}")
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
    sys.exit(main())
