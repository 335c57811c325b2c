"""`kafkatest bench` has the brokers take turns at produce and consume, the broker
whose turn it is not paused, so that neither broker's idle work lands on the other's
figures (an idle Kafka JVM takes a tenth of a core, an idle emulator none)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkatest.bench import workloads
from kafkatest.bench.processes import EmulatorProcess, alone, process_state, running


def test_the_broker_whose_turn_it_is_not_is_paused_until_the_turn_ends(tmp_path: Path) -> None:
    brokers = {"first": EmulatorProcess(tmp_path), "second": EmulatorProcess(tmp_path)}
    with running(brokers):
        first, second = brokers["first"].pid, brokers["second"].pid
        with alone(brokers, "first"):
            assert process_state(second) == "T"
            assert process_state(first) != "T"
        assert process_state(second) != "T"
        with pytest.raises(RuntimeError), alone(brokers, "second"):
            assert process_state(first) == "T"
            raise RuntimeError("a workload failed")
        assert process_state(first) != "T"  # continued even when the turn failed


def test_produce_and_consume_take_turns_round_by_round(tmp_path: Path) -> None:
    turns: list[str] = []

    @contextlib.contextmanager
    def turn(name: str) -> Iterator[None]:
        turns.append(name)
        yield

    brokers = {"a": EmulatorProcess(tmp_path), "b": EmulatorProcess(tmp_path)}
    with running(brokers):
        rates = workloads.produce_and_consume_rates(
            {name: broker.bootstrap_servers for name, broker in brokers.items()},
            "turns",
            500,
            runs=2,
            turn=turn,
        )
    assert turns == ["a", "b", "a", "b"]
    for name in ("a", "b"):
        assert rates[name].produce > 0 and rates[name].consume > 0
