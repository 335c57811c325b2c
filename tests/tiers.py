"""The suite's tiers: a fast `python -m pytest`, and the rest, which CI runs too.

Every test gets the markers `kafka` (it runs on the real Kafka backend), `spark` (it
uses a Spark fixture, or starts Spark or pytest in a subprocess) and `slow` (JVM tools,
Java clients, fuzzing, Maven, clusters, real-time waits) from one hook below, derived
from the fixtures it uses and its backend parameter, plus the `DECLARED` table for
what no fixture shows. The tiers are then selections over those markers:

* ``--tier=fast`` (the default when pytest is given no paths, i.e. the README's
  test command): every test without those markers, plus the `SMOKE` tests (the
  README's example, on each backend);
* ``--tier=rest``: everything else; ``fast`` + ``rest`` is the whole suite;
* ``--tier=all`` (the default when paths or node ids are given): no selection.

A test of the fast tier that starts a JVM, Maven, Go or npm (directly or through a
child) fails with the name of what it started: a new slow test cannot slip into the
fast tier unnoticed. With the `kafka` backend deselected, starting a Kafka broker
JVM fails any test.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

TIERS = ("fast", "rest", "hand", "all")
TIER_MARKERS = ("kafka", "spark", "slow")

#: Where a run writes what it collected and what it ran (the count check reads them).
RECORD_ENV = "KAFKATEST_TIER_RECORD"
_RECORD_FOLDER = pytest.StashKey[str]()
_COLLECTED = pytest.StashKey[list[str]]()
_COLLECTED_ITEMS = pytest.StashKey[list[pytest.Item]]()

#: Fixtures whose use implies markers (the fixture closure is what counts, so a
#: fixture built on `spark_session` implies `spark` too).
FIXTURE_MARKERS: dict[str, tuple[str, ...]] = {
    "spark_session": ("spark",),
    "delta_spark": ("spark",),  # tests/sinks/test_delta_sink.py's own session
    "three_broker_cluster": ("slow",),
    "schema_registry_spark": ("spark",),
}

#: What no fixture shows, by node-id prefix (a module, or one test), with the reason.
DECLARED: dict[str, tuple[tuple[str, ...], str]] = {
    # Spark or pytest in a subprocess.
    "tests/test_xdist.py": (("spark", "slow", "kafka"), "pytest workers sharing one Kafka"),
    "tests/test_backends.py::test_real_kafka_restart_keeps_data_and_dies_with_its_parent": (
        ("kafka", "slow"),
        "restarts a Kafka JVM",
    ),
    "tests/test_plugin.py::test_kafka_advertised_host_is_where_both_backends_listen": (
        ("kafka",),
        "a pytest run on both backends",
    ),
    "tests/test_spark_masters.py": (("spark", "slow"), "Spark masters in their own JVMs"),
    "tests/oracles/test_quiet.py": (("spark", "slow"), "Spark in a child pytest run"),
    "tests/test_bench.py": (("spark", "slow"), "runs the bench, Spark and Kafka"),
    "tests/test_bench_turns.py": (("slow",), "pauses and resumes broker processes"),
    "tests/test_spark_cds.py::test_the_second_start_maps_what_the_first_wrote": (
        ("spark", "slow"),
        "starts Spark twice in subprocesses",
    ),
    "tests/test_spark_server.py": (("spark", "slow"), "a warm Spark Connect server"),
    "tests/test_spark_server_lines.py": (("spark", "slow"), "a warm Spark Connect server"),
    "tests/test_spark_connect.py": (("spark", "slow"), "a Spark Connect server"),
    "tests/test_demo.py": (("spark", "slow"), "`kafkatest demo` starts Spark"),
    "tests/test_interrupt.py": (("spark", "slow"), "interrupts a run that started Spark"),
    "tests/test_lost_interrupts.py": (("spark", "slow"), "interrupts a run with Spark"),
    "tests/test_spark_stop.py": (("spark", "slow"), "interrupts Spark in a child process"),
    "tests/test_real_time_mode.py": (
        ("spark", "slow"),
        "Real-Time Mode queries, and a job killed in a process of its own",
    ),
    "tests/test_lean_imports.py": (("slow",), "imports in fresh interpreters"),
    "tests/test_doctor.py": (("slow",), "`kafkatest doctor` runs Java and Maven"),
    "tests/test_jars.py": (("slow",), "Maven resolution into empty caches"),
    "tests/test_class_archives.py": (("slow",), "Kafka's tools write and map class archives"),
    "tests/test_failure_sections.py::test_a_failed_test_keeps_what_kafka_logged_while_it_ran": (
        ("kafka", "slow"),
        "a pytest run on the kafka backend",
    ),
    "tests/test_class_archives.py::test_a_restarted_broker_maps_the_archive_its_first_run_wrote": (
        ("kafka", "slow"),
        "starts a Kafka broker JVM twice",
    ),
    "tests/test_plugin.py": (("slow",), "pytest runs in subprocesses"),
    "tests/test_pytest_forkserver.py": (("slow",), "pytest runs in fork servers"),
    "tests/test_pytest_forkserver_requests.py": (("slow",), "pytest runs in fork servers"),
    "tests/test_pytest_forkserver_install.py": (("slow",), "a wheel install and fork servers"),
    "tests/test_early_broker.py": (("spark", "slow"), "pytest runs with Spark"),
    "tests/scenarios/test_repro_cli.py": (("spark", "slow"), "`kafkatest repro` runs a job"),
    "tests/scenarios/test_scenario_files.py": (("slow",), "scenario files run in a child"),
    # Java clients and Kafka's own tools (a JVM each).
    "tests/compat": (("slow",), "Kafka's Java tools and kcat"),
    "tests/conformance/test_consumer_group_protocol.py": (("slow",), "Java consumers"),
    "tests/conformance/test_transactions.py": (("slow",), "Java transactional clients"),
    "tests/conformance/test_client_metrics_configs.py": (("slow",), "Kafka's config tool"),
    "tests/conformance/test_group_configs.py": (("slow",), "real session timeouts"),
    "tests/emulator/test_consumer_groups_java.py": (("slow",), "Java consumers"),
    "tests/emulator/test_groups_clients.py": (("slow",), "Java consumers"),
    "tests/emulator/test_broker_configs_wire.py::test_kafka_configs_describes_all_broker_configs": (
        ("slow",),
        "Kafka's kafka-configs tool",
    ),
    "tests/emulator/test_dynamic_broker_configs_wire.py::test_kafka_configs_alters_the_cluster_default": (
        ("slow",),
        "Kafka's kafka-configs tool",
    ),
    "tests/security/test_clients.py": (("slow",), "Java clients over TLS and SASL"),
    "tests/security/test_scram_credentials.py": (("slow",), "Kafka's config tool"),
    "tests/security/test_delegation_tokens.py::test_kafkas_token_command_and_console_clients": (
        ("slow",),
        "Kafka's DelegationTokenCommand and console clients",
    ),
    "tests/security/test_standalone_security.py": (("slow",), "Kafka's tools"),
    "tests/security/test_spark_token_provider.py": (("slow",), "a KDC (MiniKdc) JVM"),
    "tests/security/test_spark_token_provider.py::test_spark_obtains_the_token_itself_and_a_stream_reads_and_writes_with_it": (
        ("spark", "slow"),
        "Spark with Kerberos on, in a subprocess",
    ),
    "tests/acls/test_acl_tool.py": (("slow",), "Kafka's ACL tool"),
    "tests/faults/test_compaction.py": (("slow",), "Kafka's tools and real cleaner waits"),
    "tests/faults/test_control.py": (("slow",), "the control CLI in subprocesses"),
    **{
        f"tests/faults/test_value_bounds.py::{name}": (
            ("slow",),
            "a standalone emulator and the control CLI in subprocesses",
        )
        for name in (
            "test_the_control_interface_answers_400_and_keeps_serving",
            "test_the_control_interface_refuses_numbers_in_its_headers_and_path",
            "test_the_command_line_refuses_a_retention_past_the_bound",
        )
    },
    # Fuzzing and the clusters.
    "tests/emulator/test_fuzz.py": (("slow",), "mutated frames at a child emulator"),
    "tests/clusters": (("slow",), "three-broker clusters"),
}

#: The fast tier's end-to-end proof: the README's example, on each backend.
SMOKE = ("tests/test_readme_example.py::test_every_order_is_enriched",)

#: The Spark tests a whole-suite run (CI's) runs on real Kafka as well as on the
#: emulator: those whose outcome depends on what the broker does (records lost, deleted
#: or compacted under a query, transactions, outages, partitions, schemas, security,
#: ACLs, clusters), beside the README's example. Every other Spark test runs on the
#: emulator there, since the conformance suite holds the emulator to real Kafka below
#: Spark; `--spark-on-kafka=all` runs every Spark test on both (the default when pytest
#: is given paths).
SPARK_ON_KAFKA_IN_CI = (
    "tests/test_readme_example.py",
    "tests/assertions/test_query_failure.py",
    "tests/conformance/test_compaction_spark.py",
    "tests/oracles/test_catch_matrix.py",
    "tests/scenarios/test_records_deleted.py",
    "tests/scenarios/test_topic_deleted.py",
    "tests/scenarios/test_subscribed_topic_deleted.py",
    "tests/scenarios/test_partitions_and_batch.py",
    "tests/scenarios/test_broker_outage.py",
    "tests/schema_registry/test_schema_evolution.py",
    "tests/test_spark_transactions.py",
    "tests/acls",
    "tests/security",
    "tests/clusters",
)

#: Tests CI's runs leave out (`--tier=hand` runs them: `nox -s by_hand`), each with why it
#: can wait for a run by hand: CI's budget (30 minutes on two cores) holds the rest.
#: What each shows is a speed-up or a measurement (its failure makes kafkatest slower or
#: a figure wrong, never a test's outcome), or is shown in CI on another line or backend.
#: The count check knows them: CI's runs and these are the whole suite, each test once.
BY_HAND: dict[str, str] = {
    "tests/test_bench.py::test_bench_reports_every_figure": "`kafkatest bench`'s figures",
    "tests/test_bench.py::test_the_floor_of_a_cold_start_is_measured": "a bench figure",
    "tests/test_bench.py::test_the_rerun_figure_runs_one_streaming_test_through_pytest": (
        "a bench figure"
    ),
    "tests/test_bench.py::test_two_trees_are_compared_round_by_round": "a bench tool",
    "tests/test_spark_cds.py::test_the_second_start_maps_what_the_first_wrote": (
        "the Spark driver's class archive: a start without it is slower, never different "
        "(the archive's rules are tested in CI without a JVM)"
    ),
    "tests/test_class_archives.py::test_the_second_tool_run_maps_what_the_first_wrote": (
        "Kafka's JVMs' class archive: a speed-up"
    ),
    "tests/test_class_archives.py::test_a_restarted_broker_maps_the_archive_its_first_run_wrote": (
        "Kafka's JVMs' class archive: a speed-up"
    ),
    "tests/test_spark_masters.py::test_a_downstream_suite_runs_on_a_local_cluster": (
        "Spark's local-cluster master; executors in JVMs of their own reading Kafka run in "
        "CI on kafkatest's standalone cluster"
    ),
    "tests/test_spark_server_lines.py": (
        "warm mode's runs and stop on the default line; CI runs this module on PySpark 4.3 "
        "(nox -s spark43) and warm mode's start on the default line (test_spark_server)"
    ),
    # (Its other test uses the spark fixture: SPARK_ON_KAFKA_IN_CI keeps it on the emulator.)
    "tests/test_real_time_mode.py::test_a_job_killed_mid_batch_writes_the_batch_again[kafka]": (
        "Real-Time Mode on real Kafka; CI runs it on the emulator, the broker's part "
        "(produce, fetch) held to real Kafka by the conformance suite"
    ),
    "tests/emulator/test_fuzz.py::test_mutated_frames_through_the_authorization_layer_cause_no_crash_hang_or_traceback": (
        "a second fuzz run (nox -s fuzz runs longer ones); CI runs the plain one"
    ),
    "tests/emulator/test_fuzz.py::test_mutated_frames_at_a_sasl_listener_before_authentication_cause_no_crash_hang_or_traceback": (
        "as above"
    ),
    "tests/test_demo.py::test_demo_passes_on_the_sample_job": (
        "the demo's run; CI runs the demo failing on a lossy job"
    ),
    "tests/test_interrupt.py::test_ctrl_c_during_the_demo_s_query_ends_it_as_interrupted": (
        "Ctrl-C in the demo; CI interrupts a query in a test (wait_for_query) and in a "
        "scenario (run_scenario)"
    ),
    "tests/security/test_spark_token_provider.py::test_spark_obtains_the_token_itself_and_a_stream_reads_and_writes_with_it[kafka]": (
        "Spark's own token provider on real Kafka; CI runs it on the emulator, whose "
        "delegation tokens the wire tests hold to real Kafka's (test_delegation_tokens*)"
    ),
    "tests/test_xdist.py::test_two_workers_share_one_kafka_and_one_report_directory": (
        "a whole two-worker run with Spark on both backends; CI runs the shared Kafka's "
        "life with xdist (a worker killed, the controller gone)"
    ),
    "tests/oracles/test_process_mode.py::test_a_job_in_its_own_process_replays_the_batch_it_died_in": (
        "the oracles' child-process mode; CI kills a job in its own process in "
        "test_real_time_mode and test_crash_restart"
    ),
    "tests/state/test_bounded_state.py::test_the_same_over_spark_connect": (
        "the state oracle over Spark Connect; CI runs the oracles over Connect in the "
        "catch matrix and the state oracle on classic Spark"
    ),
    "tests/test_lean_imports.py::test_the_connect_client_loads_without_ipython": (
        "a load that is faster without IPython, never different"
    ),
    "tests/test_lean_imports.py::test_the_connect_client_loads_with_the_collector_paused": (
        "a load that is faster with the collector paused, never different"
    ),
    "tests/test_pytest_forkserver_install.py": (
        "`kafkatest pytest` from a wheel warns no more than pytest (a wheel built and "
        "installed: a minute); CI runs the fork server's own tests from the checkout"
    ),
}
#: Folders whose tests' runs on real Kafka CI leaves to a run by hand. Their runs on the
#: emulator stay in CI, held to what the runs on real Kafka wrote down; those re-check
#: the expectations themselves, which change only with the test or the Kafka release
#: (run `nox -s by_hand` then). The conformance suite, the CLI tools, faults, security,
#: ACLs, clusters and the Spark tests that depend on the broker run on real Kafka in CI.
BY_HAND_ON_KAFKA: dict[str, str] = {
    "tests/emulator": "the emulator's wire behaviour, request by request",
}

#: What a fast test may not start: (what it is, how to tell it from its command line).
_SLOW_PROGRAMS = ("java", "mvn", "go", "npm", "spark-submit", "spark-class")
_KAFKA_BROKER_MAINS = ("kafka.Kafka", "kafka.tools.StorageTool")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("kafkatest-suite", "this repository's test tiers").addoption(
        "--tier",
        choices=TIERS,
        default=None,
        help="fast: the quick tier (default without paths); rest: everything the fast tier "
        "leaves out but the tests CI leaves to a run by hand; hand: those (BY_HAND, "
        "BY_HAND_ON_KAFKA); "
        "all: no selection (default with paths)",
    )
    parser.getgroup("kafkatest-suite").addoption(
        "--catch-matrix",
        choices=("ci", "full"),
        default="ci",
        help="tests/oracles/test_catch_matrix.py: ci (default) runs every case on classic "
        "Spark and the cases CI_CASES names over Spark Connect, in the state column and on "
        "real Kafka; full runs every case in every column (nox -s catch_matrix)",
    )
    parser.getgroup("kafkatest-suite").addoption(
        "--spark-on-kafka",
        choices=("ci", "all"),
        default=None,
        help="ci: the Spark tests SPARK_ON_KAFKA_IN_CI names run on real Kafka too, the "
        "others on the emulator (the default of a whole-suite run); all: every Spark test "
        "on every backend --kafka-backend names (the default when paths are given)",
    )


def pytest_configure(config: pytest.Config) -> None:
    # The count check's folder is this run's alone: taken out of the environment before
    # any test starts a pytest of its own (pytester, a collection in a child), which
    # would otherwise record its small suite beside this run.
    config.stash[_RECORD_FOLDER] = os.environ.pop(RECORD_ENV, "")
    for name, text in (
        ("kafka", "runs on the real Apache Kafka backend"),
        ("spark", "uses Spark, or starts Spark or pytest in a subprocess"),
        ("slow", "JVM tools, Java clients, fuzzing, Maven, clusters or real-time waits"),
        ("smoke", "the fast tier's end-to-end test of the real connector"),
        ("tier_guard_exempt(why)", "the guard does not watch this test (it tests the guard)"),
    ):
        config.addinivalue_line("markers", f"{name}: {text}")


def chosen_tier(config: pytest.Config) -> str:
    """The tier a run selects: `--tier`, else fast for the suite and all for given paths."""
    explicit: str | None = config.getoption("--tier")
    if explicit:
        return explicit
    given_paths = config.args_source == pytest.Config.ArgsSource.ARGS
    return "all" if given_paths else "fast"


@pytest.hookimpl(tryfirst=True)  # before the plugin parametrizes `kafka_broker`
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A whole-suite run keeps a Spark test SPARK_ON_KAFKA_IN_CI does not name on the
    emulator (`--spark-on-kafka`), as a `kafka_backends("emulator")` marker would."""
    chosen = metafunc.config.getoption("--spark-on-kafka")
    if (chosen or ("all" if chosen_tier(metafunc.config) == "all" else "ci")) == "all":
        return
    closure = metafunc.fixturenames
    uses_spark = any("spark" in FIXTURE_MARKERS.get(name, ()) for name in closure)
    definition = metafunc.definition
    if not uses_spark or "kafka_broker" not in closure:
        return
    if definition.get_closest_marker("kafka_backends") is not None:
        return
    if any(names_test(entry, definition.nodeid) for entry in SPARK_ON_KAFKA_IN_CI):
        return
    definition.add_marker(pytest.mark.kafka_backends("emulator"))


def implied_markers(item: pytest.Item) -> set[str]:
    """The tier markers `item` must carry: from its fixtures, its backend and `DECLARED`."""
    names: set[str] = set()
    closure: Sequence[str] = getattr(item, "fixturenames", ())
    for fixture, markers in FIXTURE_MARKERS.items():
        if fixture in closure:
            names.update(markers)
    params = dict(_params(item))
    if any(_is_real_kafka(value) for value in params.values()):
        names.add("kafka")
    # One backend selected: `kafka_broker` is not parametrized, the run's backend is it.
    unparametrized = "kafka_broker" in closure and "kafka_broker" not in params
    if unparametrized and _is_real_kafka(_selected_backends(item.config)[0]):
        names.add("kafka")
    node = item.nodeid
    for prefix, (markers, _why) in DECLARED.items():
        if node == prefix or node.startswith((prefix + "::", prefix + "/", prefix + "[")):
            names.update(markers)
    return names


def _params(item: pytest.Item) -> Iterable[tuple[str, object]]:
    callspec = getattr(item, "callspec", None)
    return callspec.params.items() if callspec is not None else ()


def _is_real_kafka(value: object) -> bool:
    backend = getattr(value, "backend", value)
    return backend in ("kafka", "container", "external")


def is_smoke(item: pytest.Item) -> bool:
    return item.nodeid.split("[")[0] in SMOKE


def in_fast_tier(item: pytest.Item) -> bool:
    if is_smoke(item):
        return True
    return not any(item.get_closest_marker(name) for name in TIER_MARKERS)


def names_test(entry: str, node: str) -> bool:
    """Whether a list's `entry` names test `node`: the test itself, the test without its
    parameters (``file.py::test``), its module (``file.py``) or a folder above it."""
    separator = "[" if "::" in entry else "::" if entry.endswith(".py") else "/"
    return node == entry or node.startswith(entry + separator)


def by_hand_names(node: str) -> list[str]:
    """The `BY_HAND` entries naming test `node`."""
    return [entry for entry in BY_HAND if names_test(entry, node)]


def is_by_hand(item: pytest.Item) -> bool:
    if by_hand_names(item.nodeid):
        return True
    in_folder = any(names_test(folder, item.nodeid) for folder in BY_HAND_ON_KAFKA)
    return in_folder and any(_is_real_kafka(value) for _, value in _params(item))


def in_tier(item: pytest.Item, tier: str) -> bool:
    if tier == "fast":
        return in_fast_tier(item)
    return not in_fast_tier(item) and is_by_hand(item) == (tier == "hand")


@pytest.hookimpl(tryfirst=True)  # before `-m` reads the markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    config.stash[_COLLECTED] = [item.nodeid for item in items]
    config.stash[_COLLECTED_ITEMS] = list(items)
    for item in items:
        for name in sorted(implied_markers(item)):
            item.add_marker(name)
        if is_smoke(item):
            item.add_marker("smoke")
    if "kafka" not in _selected_backends(config):
        # A test that starts real Kafka itself, in a run that leaves the backend out.
        skip = pytest.mark.skip(reason="needs the kafka backend, which --kafka-backend leaves out")
        for item in items:
            if item.get_closest_marker("kafka") is not None:
                item.add_marker(skip)
    tier = chosen_tier(config)
    if tier == "all":
        return
    keep = [item for item in items if in_tier(item, tier)]
    dropped = [item for item in items if not in_tier(item, tier)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def whole_suite_collected(config: pytest.Config) -> list[pytest.Item] | None:
    """This run's collection before any selection, when it is the whole suite (the run
    was given no paths, so `testpaths` was collected); None otherwise."""
    if config.args_source is not pytest.Config.ArgsSource.TESTPATHS:
        return None
    return config.stash.get(_COLLECTED_ITEMS, None)


def pytest_report_header(config: pytest.Config) -> str:
    tier = chosen_tier(config)
    rest = {
        "fast": "`--tier=rest` and `--tier=hand` run the rest",
        "rest": "`--tier=fast` and `--tier=hand` run the rest",
        "hand": "the tests CI leaves out",
    }
    return f"kafkatest suite tier: {tier}" + (f" ({rest[tier]})" if tier in rest else "")


# --- the guard: what a fast test, or an emulator-only run, may not start ----------


@dataclass
class _Watch:
    """Processes started while one test ran, seen by a launch hook and a poller."""

    item: pytest.Item
    known: set[int]
    seen: dict[int, set[str]] = field(default_factory=dict)


_current: _Watch | None = None
_lock = threading.Lock()


def _forbidden(command: str, item: pytest.Item, kafka_selected: bool) -> str | None:
    """Why `item` may not start `command`, or None."""
    if item.get_closest_marker("tier_guard_exempt") is not None:
        return None
    words = command.split()
    if not kafka_selected and any(main in words for main in _KAFKA_BROKER_MAINS):
        return "a Kafka broker JVM, in a run without the kafka backend"
    if in_fast_tier(item) and not is_smoke(item):
        # The program, or the script an interpreter runs (`/bin/sh .../mvn ...`).
        for program in (os.path.basename(word) for word in words[:2]):
            if program in _SLOW_PROGRAMS:
                return f"{program}: mark it by adding it to DECLARED in tests/tiers.py"
    return None


def _record(pid: int, command: str) -> None:
    with _lock:
        if _current is not None and pid not in _current.known:
            # A pid may exec another program (`sh -c 'java ...'`): keep every command.
            _current.seen.setdefault(pid, set()).add(command)


_original_execute_child = subprocess.Popen._execute_child  # type: ignore[attr-defined]


def _watched_execute_child(self: subprocess.Popen[bytes], args: object, *rest: object) -> None:
    _original_execute_child(self, args, *rest)
    command = args if isinstance(args, str) else " ".join(map(str, args))  # type: ignore[call-overload]
    _record(self.pid, command)


def _descendants(root: int) -> dict[int, str]:
    """Every live descendant of `root` with its command line, from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found: dict[int, str] = {}
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            try:
                raw = Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:
                continue
            found[child] = raw.replace(b"\0", b" ").decode(errors="replace").strip()
            stack.append(child)
    return found


def _poll(stop: threading.Event) -> None:
    while not stop.wait(0.25):
        for pid, command in _descendants(os.getpid()).items():
            _record(pid, command)


@pytest.fixture(scope="session", autouse=True)
def _tier_guard(request: pytest.FixtureRequest) -> Iterator[None]:
    """Watches process launches for the whole run (Linux: the poller reads /proc)."""
    if not Path("/proc/self/stat").exists():
        yield
        return
    subprocess.Popen._execute_child = _watched_execute_child  # type: ignore[attr-defined]
    stop = threading.Event()
    poller = threading.Thread(target=_poll, args=(stop,), name="kafkatest-tier-guard", daemon=True)
    poller.start()
    try:
        yield
    finally:
        stop.set()
        poller.join(5)
        subprocess.Popen._execute_child = _original_execute_child  # type: ignore[attr-defined]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    global _current
    with _lock:
        _current = _Watch(item, set(_descendants(os.getpid())))
    try:
        yield
    finally:
        with _lock:
            _current = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Fails the phase (setup, call or teardown) in which a forbidden program started."""
    outcome = yield
    with _lock:
        watch = _current
        commands: set[str] = set()
        if watch is not None and watch.item is item:
            commands = set().union(*watch.seen.values())
            watch.known.update(watch.seen)
            watch.seen.clear()
    kafka_selected = "kafka" in _selected_backends(item.config)
    problems = sorted(
        {
            f"started {why}\n    {command[:300]}"
            for command in commands
            if (why := _forbidden(command, item, kafka_selected)) is not None
        }
    )
    if problems:
        report = outcome.get_result()
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} is in the fast tier (or an emulator-only run) but:\n  "
            + "\n  ".join(problems)
        )


def _selected_backends(config: pytest.Config) -> list[str]:
    from kafkatest.pytest_plugin import selected_backends

    return list(selected_backends(config))


# --- the count check: the runs of CI together are the whole suite, each test once ----


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """With `RECORD_ENV` set to a folder: this run's collection (before any selection)
    and its selection (after tiers, `-m` and `-k`), as JSON named by the process id."""
    folder = session.config.stash.get(_RECORD_FOLDER, "")
    if not folder or hasattr(session.config, "workerinput"):  # xdist: the controller writes
        return
    import json

    record = {
        "args": list(session.config.invocation_params.args),
        "collected": sorted(session.config.stash.get(_COLLECTED, [])),
        "selected": sorted(item.nodeid for item in session.items),
        "by_hand": sorted(
            item.nodeid
            for item in session.config.stash.get(_COLLECTED_ITEMS, [])
            if is_by_hand(item) and not in_fast_tier(item)
        ),
    }
    Path(folder).mkdir(parents=True, exist_ok=True)
    (Path(folder) / f"run-{os.getpid()}.json").write_text(json.dumps(record))


def partition_problems(records: Sequence[dict[str, object]]) -> list[str]:
    """What is wrong with runs that should together run the whole suite once: runs that
    collected different suites, tests two runs ran, tests no run ran. Empty when right."""
    if not records:
        return ["no run was recorded"]
    problems: list[str] = []
    collections = [set(r["collected"]) for r in records]  # type: ignore[call-overload]
    everything = set().union(*collections)
    for record, collected in zip(records, collections, strict=True):
        if collected != everything:
            problems.append(
                f"{record['args']} collected {len(collected)} of {len(everything)} tests, "
                f"e.g. not {sorted(everything - collected)[:3]}"
            )
    seen: dict[str, list[object]] = {}
    for record in records:
        for node in record["selected"]:  # type: ignore[attr-defined]
            seen.setdefault(node, []).append(record["args"])
    twice = sorted(node for node, runs in seen.items() if len(runs) > 1)
    if twice:
        problems.append(f"{len(twice)} tests ran in more than one run, e.g. {twice[:5]}")
    by_hand = _by_hand(records)
    missed = sorted(everything - set(seen) - by_hand)
    if missed:
        problems.append(f"{len(missed)} tests ran in no run, e.g. {missed[:5]}")
    return problems


def _by_hand(records: Sequence[dict[str, object]]) -> set[str]:
    """The tests the runs recorded as left to `--tier=hand`."""
    return {str(node) for record in records for node in record.get("by_hand", ())}  # type: ignore[attr-defined]


def main(argv: Sequence[str]) -> int:
    """`python tests/tiers.py check FOLDER`: the count check over the runs recorded there."""
    import json
    import sys

    if len(argv) != 2 or argv[0] != "check":
        print("usage: python tests/tiers.py check FOLDER", file=sys.stderr)
        return 2
    records = [json.loads(p.read_text()) for p in sorted(Path(argv[1]).glob("run-*.json"))]
    problems = partition_problems(records)
    if problems:
        print("the tiers' count check failed:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    total = len(records[0]["collected"])
    counts = " + ".join(str(len(r["selected"])) for r in records)
    by_hand = len(_by_hand(records))
    print(
        f"the tiers' count check: {counts} + {by_hand} by hand (--tier=hand) = {total} "
        "collected, each test in one run"
    )
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
