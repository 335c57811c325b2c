"""The emulator's produce and consume throughput, one source tree against another.

`python -m kafkatest.bench.trees BASE_TREE HEAD_TREE [ROUNDS]` runs each tree's
`kafkatest emulator` (PYTHONPATH=<tree>) in turn, round by round, and drives both with
this tree's bench clients (200k records per round); it prints each tree's median and
every round. Alternating rounds keeps a shared machine's drift out of the ratio; one
round can be off by a third, so take several.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

from kafkatest.bench.processes import EmulatorProcess
from kafkatest.bench.workloads import consume, create_topic, produce

RECORDS = 200_000


def compare(trees: dict[str, str], rounds: int) -> dict[str, dict[str, list[float]]]:
    figures: dict[str, dict[str, list[float]]] = {
        name: {"produce": [], "consume": []} for name in trees
    }
    with tempfile.TemporaryDirectory(prefix="kafkatest-trees-") as scratch:
        for round_ in range(rounds):
            for name, tree in trees.items():
                emulator = EmulatorProcess(Path(scratch), tree)
                emulator.start()
                try:
                    bootstrap, topic = emulator.bootstrap_servers, f"trees-{round_}"
                    create_topic(bootstrap, topic)
                    figures[name]["produce"].append(RECORDS / produce(bootstrap, topic, RECORDS))
                    figures[name]["consume"].append(RECORDS / consume(bootstrap, topic, RECORDS))
                finally:
                    emulator.close()
    return figures


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print("usage: python -m kafkatest.bench.trees BASE_TREE HEAD_TREE [ROUNDS]")
        return 2
    rounds = int(argv[2]) if len(argv) == 3 else 5
    figures = compare({"base": argv[0], "head": argv[1]}, rounds)
    for name, by_workload in figures.items():
        medians = {w: round(statistics.median(v)) for w, v in by_workload.items()}
        rounds_seen = {w: [round(x) for x in v] for w, v in by_workload.items()}
        print(f"{name}: medians (records/s) {medians}; rounds {rounds_seen}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
