"""The plugin's own behaviour, seen from a downstream test run (pytester)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_failed_delivery_assertion_writes_its_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from kafkatest.assertions import assert_exactly_once

        def test_dupes():
            expected = [{"id": 1}, {"id": 2}]
            assert_exactly_once(expected, [{"id": 1}, {"id": 1}, {"id": 2}], on="id")
        """
    )
    result = pytester.runpytest_inprocess("--kafkatest-reports=out")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*kafkatest delivery report*", "*html: out/*delivery-report.html"])
    written = sorted(p.name for p in (pytester.path / "out").rglob("delivery-report.*"))
    assert written == ["delivery-report.html", "delivery-report.json"]


def test_unknown_backend_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(kafka_broker):\n    pass\n")
    result = pytester.runpytest_inprocess("--kafka-backend=kafak")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown backend kafak; choose from emulator, kafka*"])


def test_topics_are_unique_and_deleted_after_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import json, pathlib
        names = []

        def test_a(kafka_topic, kafka_broker):
            names.append(kafka_topic(partitions=2))
            names.append(kafka_topic())
            assert len(set(names)) == 2
            assert kafka_broker.partition_count(names[0]) == 2

        def test_b(kafka_broker):
            left = set(names) & set(kafka_broker.list_topics())
            pathlib.Path("left.json").write_text(json.dumps(sorted(left)))
        """
    )
    result = pytester.runpytest_inprocess("--kafka-backend=emulator", "-p", "no:randomly")
    result.assert_outcomes(passed=2)
    assert (pytester.path / "left.json").read_text() == "[]"


def test_emulator_brokers_option_spreads_leaders(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_cluster(kafka_broker, kafka_topic):
            topic = kafka_topic(partitions=6)
            servers = kafka_broker.bootstrap_servers.split(",")
            assert len(servers) == 3
            metadata = kafka_broker.admin().list_topics(topic, timeout=10)
            assert len(metadata.brokers) == 3
            leaders = {p.leader for p in metadata.topics[topic].partitions.values()}
            assert len(leaders) == 3
        """
    )
    result = pytester.runpytest_inprocess("--kafka-backend=emulator", "--emulator-brokers=3")
    result.assert_outcomes(passed=1)


def _non_loopback_address() -> str | None:
    """This machine's address on its default route, if it has one."""
    import socket

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 9))  # no packet is sent: only a route is chosen
        address = str(probe.getsockname()[0])
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


def test_kafka_advertised_host_is_where_both_backends_listen(pytester: pytest.Pytester) -> None:
    address = _non_loopback_address()
    if address is None:
        pytest.skip("this machine has no address other than loopback")
    pytester.makepyfile(
        f"""
        def test_reachable(kafka_broker, kafka_topic):
            assert {{s.rsplit(":", 1)[0] for s in kafka_broker.bootstrap_servers.split(",")}} == {{"{address}"}}
            topic = kafka_topic()
            metadata = kafka_broker.admin().list_topics(timeout=10)
            assert {{b.host for b in metadata.brokers.values()}} == {{"{address}"}}
            kafka_broker.produce([kafkatest.Record(topic, value=b"over the network")])
            assert [r.value for r in kafka_broker.consume(topic)] == [b"over the network"]

        import kafkatest
        """
    )
    result = pytester.runpytest_inprocess(
        "--kafka-backend=emulator,kafka",
        f"--kafka-advertised-host={address}",
        "-W",
        "ignore::kafkatest.emulator.exposure.ExposedEmulatorWarning",
    )
    result.assert_outcomes(passed=2)


def test_a_remote_spark_master_and_a_loopback_broker_give_a_warning(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest_inprocess("--spark-master=spark://192.0.2.77:7077")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["*Spark runs at spark://192.0.2.77:7077, but the broker advertises 127.0.0.1*"]
    )
    local = pytester.runpytest_inprocess("--spark-master=spark://127.0.0.1:7077")
    assert "but the broker advertises" not in local.stdout.str()


def test_kafka_brokers_option_asks_the_kafka_backend_for_a_cluster(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--kafka-brokers=3` reaches `start_broker` for the kafka backend, and the run's
    tests get that cluster and its per-broker faults.

    What such a cluster is on Kafka (three broker JVMs and a controller, one stopped and
    started, leaders moving) is tested on `start_broker` itself in tests/clusters; here
    the emulator's cluster of the size asked for stands in for the JVMs, which cost a
    CI lane two minutes to prove what tests/clusters proves."""
    from kafkatest.brokers import registry
    from kafkatest.plugin import brokers

    asked: list[tuple[str, object]] = []

    def start_recorded(backend: str, bootstrap: str | None = None, **options: object):  # type: ignore[no-untyped-def]
        asked.append((backend, options.get("brokers")))
        return registry.start_broker("emulator", bootstrap, **options)

    monkeypatch.setattr(brokers, "start_broker", start_recorded)
    pytester.makepyfile(
        """
        def test_cluster(kafka_broker, kafka_topic, kafka_faults):
            assert len(kafka_broker.bootstrap_servers.split(",")) == 3
            topic = kafka_topic(partitions=3)
            metadata = kafka_broker.admin().list_topics(topic, timeout=10)
            assert sorted(metadata.brokers) == [1, 2, 3]
            kafka_faults.stop_broker(2)
            assert sorted(kafka_broker.admin().list_topics(timeout=10).brokers) == [1, 3]
        """
    )
    result = pytester.runpytest_inprocess("--kafka-backend=kafka", "--kafka-brokers=3")
    result.assert_outcomes(passed=1)
    assert asked == [("kafka", 3)]
    # One broker (no `brokers` option) unless asked, on every backend.
    asked.clear()
    pytester.makepyfile("def test_one(kafka_broker):\n    pass\n")
    pytester.runpytest_inprocess("--kafka-backend=kafka").assert_outcomes(passed=1)
    assert asked == [("kafka", None)]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--emulator-brokers=0"], "--emulator-brokers=0: the emulator serves 1 to 64 brokers"),
        (["--emulator-brokers=-2"], "--emulator-brokers=-2: the emulator serves 1 to 64 brokers"),
        (["--emulator-brokers=100000"], "--emulator-brokers=100000: the emulator serves 1 to 64"),
        (["--emulator-brokers=two"], "*--emulator-brokers*invalid int value*"),
        (["--kafka-brokers=0"], "--kafka-brokers=0: the kafka backend runs 1 to 9 brokers"),
        (["--kafka-brokers=10"], "--kafka-brokers=10: the kafka backend runs 1 to 9 brokers"),
        (["--kafka-bootstrap=localhost"], "--kafka-bootstrap='localhost': give host:port*"),
        (["--kafka-bootstrap=h:1,h:99999"], "*'h:99999' is not host:port*"),
        (["--kafka-backend=external"], "--kafka-backend=external needs --kafka-bootstrap*"),
        (["--kafkatest-reports=afile.txt"], "--kafkatest-reports='afile.txt' is a file*"),
    ],
)
def test_bad_plugin_options_are_one_usage_error_naming_the_option(
    pytester: pytest.Pytester, args: list[str], says: str
) -> None:
    pytester.makefile(".txt", afile="not a directory")
    pytester.makepyfile(
        "from pathlib import Path\ndef test_x(kafka_broker):\n    Path('ran').write_text('yes')\n"
    )

    result = pytester.runpytest_inprocess("--kafka-backend=emulator", *args)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{says.strip('*')}*"])
    assert not (pytester.path / "ran").exists()


def test_loading_the_plugin_leaves_the_library_for_first_use() -> None:
    """Every pytest run of a project with kafkatest installed loads the plugin; the
    assertions, seeding and sinks are imported when a test first uses them."""
    import subprocess
    import sys

    probe = (
        "import sys, kafkatest.pytest_plugin\n"
        "heavy = [m for m in ('kafkatest.assertions', 'kafkatest.seeding', 'kafkatest.sinks') "
        "if m in sys.modules]\n"
        "print(heavy)\n"
        "import kafkatest\n"
        "missing = [n for n in kafkatest.__all__ if not hasattr(kafkatest, n)]\n"
        "print(missing, kafkatest.seed.__module__, sorted(set(kafkatest.__all__) - set(dir(kafkatest))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.splitlines() == ["[]", "[] kafkatest.seeding.seed []"]
    with pytest.raises(AttributeError, match="has no attribute 'seeed'"):
        import kafkatest

        _ = kafkatest.seeed  # type: ignore[attr-defined]
