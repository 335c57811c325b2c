"""`kafkatest bench`: the emulator and real Apache Kafka measured side by side, in one run."""

from kafkatest.bench.run import run_bench

__all__ = ["run_bench"]
