"""Capture against a plain consumer: records/s over the same records, and whether the
capture's memory stays flat (it streams to the file).

Run: ``python -m kafkatest.bench.capture [RECORDS]`` (default 1,000,000). The broker is an
emulator in a process of its own, so neither reader shares its interpreter.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kafkatest.bench.workloads import PARTITIONS, consume, create_topic, produce
from kafkatest.brokers.process import rss_mb


def capture_rate(bootstrap: str, topic: str, out: Path) -> dict[str, Any]:
    """Capture the whole topic to `out`: records/s and RSS along the way."""
    from kafkatest.capture.anonymize import Anonymizer
    from kafkatest.capture.ranges import Selection
    from kafkatest.capture.reader import Capture, Limits
    from kafkatest.seeding.capture_file import open_output

    samples: list[float] = []
    capture = Capture(
        {"bootstrap.servers": bootstrap},
        [topic],
        Selection(),
        Limits(),
        Anonymizer([], b"bench"),
        None,
        lambda _count: samples.append(rss_mb()),
    )
    started = time.perf_counter()
    with open_output(str(out)) as stream:
        summary = capture.run(stream)
    elapsed = time.perf_counter() - started
    steady = samples[len(samples) // 10 :] or [0.0]
    return {
        "records": summary.total,
        "records_per_s": round(summary.total / elapsed),
        "file_mb": round(out.stat().st_size / 2**20, 1),
        "rss_mb_at_10pct": round(steady[0], 1),
        "rss_mb_at_end": round(samples[-1] if samples else 0.0, 1),
    }


def run(records: int) -> dict[str, Any]:
    """Both readers over the same `records` records of one topic on a standalone emulator."""
    import signal
    import subprocess

    from kafkatest.brokers.process import free_port

    port = free_port()
    command = [sys.executable, "-m", "kafkatest.cli", "emulator", "--port", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdout is not None
        server.stdout.readline()  # the banner: it serves from here on
        bootstrap = f"127.0.0.1:{port}"
        create_topic(bootstrap, "capture-bench")
        produce(bootstrap, "capture-bench", records)
        plain_s = consume(bootstrap, "capture-bench", records)
        with tempfile.TemporaryDirectory(prefix="kafkatest-capture-bench-") as scratch:
            captured = capture_rate(bootstrap, "capture-bench", Path(scratch) / "c.jsonl")
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=30)
    return {
        "records": records,
        "partitions": PARTITIONS,
        "plain_consumer_records_per_s": round(records / plain_s),
        "capture": captured,
    }


if __name__ == "__main__":
    print(json.dumps(run(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000), indent=2))
