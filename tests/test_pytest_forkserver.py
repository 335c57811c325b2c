"""`kafkatest pytest`: each run is a child of a fork server that imported pytest, its
plugins and PySpark's Connect client once. What a run must still be is the caller's own
pytest run: its directory, environment, umask, terminal, arguments and exit status; its
project's files read anew; Ctrl-C and a vanished caller reaching it; and a server that
is private, replaced when what it imported changes, and gone when idle.

The runs here are plain Python tests (no Spark); tests/test_spark_server_lines.py runs
a Spark test through it on every PySpark line."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import pty
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

FORKED_TEST = """
import json, os, sys

def test_reports_where_it_ran(tmp_path_factory):
    from kafkatest._ground.tempdirs import owned_tempdir

    facts = {
        "owned": str(owned_tempdir("kafkatest-forked-run-")),  # removed at exit
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "cwd": os.getcwd(),
        "mark": os.environ.get("FORKED_MARK"),
        "umask": os.umask(0o022),
        "argv0": os.path.basename(sys.argv[0]),
        "connect_preloaded": "pyspark.sql.connect.session" in sys.modules,
    }
    with open(os.environ["FACTS_FILE"], "w") as out:
        json.dump(facts, out)

def test_fails():
    assert 1 + 1 == 3
"""


@contextlib.contextmanager
def _cache_of_its_own() -> Iterator[dict[str, str]]:
    """An environment with a cache of its own, so that its servers are the caller's,
    stopped (and checked gone) at the end. A short path: one too long for a socket's
    address would put the servers in a folder of the temporary directory instead."""
    cache = tempfile.mkdtemp(prefix="kt-")
    env = {**os.environ, "KAFKATEST_CACHE_DIR": cache}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    try:
        yield env
    finally:
        stopped = _kafkatest(["pytest-server", "stop"], env=env)
        shutil.rmtree(cache)
    assert stopped.returncode == 0, stopped.stderr


@pytest.fixture(scope="module")
def shared_env() -> Iterator[dict[str, str]]:
    """One server for the tests that need no server of their own (each start costs
    about 3 s of imports)."""
    with _cache_of_its_own() as env:
        yield env


@pytest.fixture
def forkserver_env() -> Iterator[dict[str, str]]:
    """A server of the test's own: for the tests that start, stop or replace servers."""
    with _cache_of_its_own() as env:
        yield env


def _kafkatest(
    args: list[str], env: dict[str, str], cwd: Path | None = None, **options: object
) -> subprocess.CompletedProcess[str]:
    """The `kafkatest` command, its output captured as text."""
    options = {"capture_output": True, "text": True, "timeout": 120, **options}
    command = [sys.executable, "-m", "kafkatest.cli", *args]
    return subprocess.run(command, cwd=cwd, env=env, **options)  # type: ignore[call-overload,no-any-return]


def _kafkatest_pytest(
    project: Path, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    return _kafkatest(["pytest", "-p", "no:cacheprovider", *args], env, project)


def _servers(env: dict[str, str]) -> list[dict]:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json; from kafkatest.apps.pytest_forkserver import running_servers; "
            "print(json.dumps(running_servers()))",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return list(json.loads(done.stdout))


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_forked.py").write_text(FORKED_TEST)
    return project


def test_a_run_is_the_callers_forked_from_the_server(
    tmp_path: Path, shared_env: dict[str, str]
) -> None:
    project = _project(tmp_path)
    facts_file = tmp_path / "facts.json"
    env = {**shared_env, "FORKED_MARK": "first", "FACTS_FILE": str(facts_file)}
    first = _kafkatest_pytest(project, env, "-q")
    assert first.returncode == 1, first.stdout + first.stderr  # pytest's: a test failed
    assert "1 failed, 1 passed" in first.stdout
    assert "assert (1 + 1) == 3" in first.stdout  # assertion rewriting of the project's test
    assert first.stderr == ""
    facts = json.loads(facts_file.read_text())
    (server,) = _servers(env)
    assert facts["ppid"] == server["pid"]  # a child of the server, not of the client
    assert facts["cwd"] == str(project)
    assert facts["mark"] == "first"
    assert facts["argv0"] == "pytest"
    assert not Path(facts["owned"]).exists()  # the modules' exit handlers ran
    connect_installed = all(importlib.util.find_spec(m) for m in ("pyarrow", "grpc", "pandas"))
    assert facts["connect_preloaded"] == connect_installed

    # The next run: the same server, another child, the caller's umask and environment,
    # and the project's edited test read anew.
    (project / "test_forked.py").write_text(FORKED_TEST.replace("1 + 1 == 3", "1 + 2 == 3"))
    second = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, sys; os.umask(0o027); from kafkatest.cli import main; "
            "sys.exit(main(['pytest', '-q', '-p', 'no:cacheprovider']))",
        ],
        cwd=project,
        env={**env, "FORKED_MARK": "second"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert "2 passed" in second.stdout
    again = json.loads(facts_file.read_text())
    assert again["ppid"] == server["pid"] and again["pid"] != facts["pid"]
    assert (again["mark"], again["umask"]) == ("second", 0o027)
    assert [s["pid"] for s in _servers(env)] == [server["pid"]]


def test_a_long_run_is_not_taken_for_an_orphan(tmp_path: Path, shared_env: dict[str, str]) -> None:
    """The server reads a request with a 10 s bound; the run's watch on its caller
    must not inherit it (a run of over 10 s was once interrupted as orphaned)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_long.py").write_text("import time\n\ndef test_long():\n    time.sleep(12)\n")
    done = _kafkatest_pytest(project, shared_env, "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_the_exit_status_is_pytests(tmp_path: Path, shared_env: dict[str, str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _kafkatest_pytest(empty, shared_env).returncode == 5  # nothing collected
    usage = _kafkatest_pytest(empty, shared_env, "--no-such-option")
    assert usage.returncode == 4
    assert "unrecognized arguments: --no-such-option" in usage.stderr


def test_a_terminal_stays_a_terminal(tmp_path: Path, shared_env: dict[str, str]) -> None:
    """The run writes to the caller's terminal itself (its descriptors are passed), so
    pytest colours its summary as on any terminal."""
    project = _project(tmp_path)
    env = {**shared_env, "FACTS_FILE": str(tmp_path / "facts.json")}
    env.pop("NO_COLOR", None)
    env.pop("PY_COLORS", None)
    controller, terminal = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "kafkatest.cli", "pytest", "-p", "no:cacheprovider"],
            cwd=project,
            env=env,
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            timeout=120,
        )
        os.close(terminal)
        terminal = -1
        output = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal's other end is closed: all is read
                break
            if not chunk:
                break
            output += chunk
    finally:
        if terminal != -1:
            os.close(terminal)
        os.close(controller)
    assert done.returncode == 1
    assert b"\x1b[31m" in output and b"1 failed" in output  # red, as pytest paints failures


def test_pdb_reads_the_callers_input(tmp_path: Path, shared_env: dict[str, str]) -> None:
    """The run's standard input is the caller's: `--pdb` takes its commands there."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_pdb.py").write_text("def test_f():\n    x = 41\n    assert x == 3\n")
    done = _kafkatest(
        ["pytest", "-p", "no:cacheprovider", "--pdb"], shared_env, project, input="p x + 1\nc\n"
    )
    assert done.returncode == 1
    assert "(Pdb) 42" in done.stdout


def test_a_changed_preloaded_module_replaces_the_server(
    tmp_path: Path, forkserver_env: dict[str, str]
) -> None:
    """`pytest_server_preload` names the project's heavy libraries: an edit to one is
    seen by the next run, which gets a new server."""
    library = tmp_path / "library"
    library.mkdir()
    (library / "heavy_library.py").write_text("VALUE = 1\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_value.py").write_text(
        "import os, heavy_library\n\n"
        "def test_value():\n"
        "    assert heavy_library.VALUE == int(os.environ['EXPECTED'])\n"
    )
    env = {
        **forkserver_env,
        "PYTHONPATH": str(library),
        "KAFKATEST_PYTEST_SERVER_PRELOAD": "heavy_library",
    }
    assert _kafkatest_pytest(project, {**env, "EXPECTED": "1"}).returncode == 0
    (first,) = _servers(env)
    module = library / "heavy_library.py"
    module.write_text("VALUE = 2\n")
    stamp = module.stat().st_mtime_ns + 2_000_000_000
    os.utime(module, ns=(stamp, stamp))
    result = _kafkatest_pytest(project, {**env, "EXPECTED": "2"})
    assert result.returncode == 0, result.stdout + result.stderr
    (second,) = _servers(env)
    assert second["pid"] != first["pid"]
    with pytest.raises(ProcessLookupError):
        os.kill(first["pid"], 0)


def test_another_environment_gets_a_server_of_its_own(
    tmp_path: Path, forkserver_env: dict[str, str]
) -> None:
    """A variable the preloaded libraries read as they load (here one of Spark's)
    keys the server: each value has its own, and neither is made stale."""
    empty = tmp_path / "empty"
    empty.mkdir()
    for value in ("a", "b", "a"):
        done = _kafkatest_pytest(empty, {**forkserver_env, "SPARK_KAFKATEST_MARK": value})
        assert done.returncode == 5
    assert len(_servers(forkserver_env)) == 2


SLEEPER = """
import os, time, pytest

@pytest.fixture
def torn_down_marker():
    yield
    with open(os.environ["TORN_DOWN"], "w") as out:
        out.write("torn down")

def test_sleeps(torn_down_marker):
    with open(os.environ["STARTED"], "w") as out:
        out.write(str(os.getpid()))
    time.sleep(60)
"""


def _wait_for(path: Path, timeout_s: float = 60) -> str:
    deadline = time.monotonic() + timeout_s
    while not path.exists() or not path.read_text():
        assert time.monotonic() < deadline, f"{path} was not written"
        time.sleep(0.05)
    return path.read_text()


def _wait_gone(pid: int, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        assert time.monotonic() < deadline, f"process {pid} still runs"
        time.sleep(0.05)


@pytest.mark.parametrize("how", ["ctrl-c", "killed"])
def test_an_interrupted_caller_interrupts_its_run(
    tmp_path: Path, shared_env: dict[str, str], how: str
) -> None:
    """Ctrl-C reaches the run as it would reach pytest (its fixtures torn down, pytest's
    status 2); a caller killed outright leaves no run behind either."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_sleeps.py").write_text(SLEEPER)
    started, torn_down = tmp_path / "started", tmp_path / "torn-down"
    env = {**shared_env, "STARTED": str(started), "TORN_DOWN": str(torn_down)}
    caller = subprocess.Popen(
        [sys.executable, "-m", "kafkatest.cli", "pytest", "-p", "no:cacheprovider", "-q"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        run = int(_wait_for(started))
        caller.send_signal(signal.SIGINT if how == "ctrl-c" else signal.SIGKILL)
        output, _ = caller.communicate(timeout=60)
        assert _wait_for(torn_down, 30) == "torn down"
        _wait_gone(run)
    finally:
        if caller.poll() is None:
            caller.kill()
    if how == "ctrl-c":
        assert caller.returncode == 2, output  # pytest's "interrupted"
        assert "KeyboardInterrupt" in output


def test_an_idle_server_stops_and_leaves_nothing(
    tmp_path: Path, forkserver_env: dict[str, str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {**forkserver_env, "KAFKATEST_PYTEST_SERVER_IDLE_MINUTES": "0.02"}  # 1.2 s
    assert _kafkatest_pytest(empty, env).returncode == 5
    (server,) = _servers(env)
    _wait_gone(server["pid"])
    assert _servers(env) == []
    assert not Path(server["socket"]).exists()


def test_a_bad_setting_is_refused_with_what_to_set(
    tmp_path: Path, forkserver_env: dict[str, str]
) -> None:
    project = _project(tmp_path)
    env = {
        **forkserver_env,
        "FACTS_FILE": str(tmp_path / "facts.json"),
        "KAFKATEST_PYTEST_SERVER_IDLE_MINUTES": "soon",
    }
    done = _kafkatest_pytest(project, env, "-q")
    assert done.returncode == 2
    assert done.stderr == (
        "kafkatest: pytest_server_idle_minutes = 'soon' (KAFKATEST_PYTEST_SERVER_IDLE_MINUTES): "
        "give the minutes, more than 0 and at most a week (10080): 30, say, or 0.5\n"
    )
    assert not (tmp_path / "facts.json").exists()
    assert _servers(env) == []


def test_only_its_user_reaches_it(tmp_path: Path, forkserver_env: dict[str, str]) -> None:
    """The socket's folder admits its owner alone; and were it opened to others, the
    server still refuses any peer of another uid (checked as root, acting as nobody)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _kafkatest_pytest(empty, forkserver_env).returncode == 5
    (server,) = _servers(forkserver_env)
    socket_file = Path(server["socket"])
    assert stat.S_IMODE(socket_file.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(socket_file.stat().st_mode) & 0o077 == 0
    if os.getuid() != 0:
        pytest.skip("acting as another user needs root")
    client = (
        "import os, socket, sys\n"
        "os.setuid(65534)\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "try:\n"
        "    s.connect(sys.argv[1])\n"
        "except PermissionError:\n"
        "    print('denied'); sys.exit(0)\n"
        "try:\n"
        "    socket.send_fds(s, [b'KTP1' + (2).to_bytes(4, 'big')], [0, 1, 2])\n"
        "    s.sendall(b'{}')\n"
        "    print('answered' if s.recv(100) else 'closed')\n"
        "except (ConnectionResetError, BrokenPipeError):\n"
        "    print('closed')\n"
    )
    denied = subprocess.run(
        [sys.executable, "-c", client, str(socket_file)], capture_output=True, text=True
    )
    assert denied.stdout.strip() == "denied", denied.stderr
    # Opened up by mistake: the server still checks who is calling.
    traversable = [p for p in (socket_file.parent, *socket_file.parent.parents)]
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in traversable}
    try:
        for path in traversable:
            path.chmod(modes[path] | 0o011)
        socket_file.chmod(0o666)
        refused = subprocess.run(
            [sys.executable, "-c", client, str(socket_file)], capture_output=True, text=True
        )
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
    assert refused.stdout.strip() == "closed", refused.stdout + refused.stderr
    assert "refused a connection from uid 65534" in socket_file.with_suffix(".log").read_text()


def test_the_module_the_client_runs_imports_only_the_standard_library() -> None:
    """The `kafkatest pytest` client pays every import it makes on every run."""
    code = (
        "import sys; before = set(sys.modules); import kafkatest.apps.pytest_forkserver; "
        "print(sorted(m.split('.')[0] for m in set(sys.modules) - before))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(eval(done.stdout))  # the list of names printed just above
    assert loaded <= {"kafkatest", *sys.stdlib_module_names}, loaded


def test_off_linux_the_client_runs_pytest_itself(
    tmp_path: Path, forkserver_env: dict[str, str]
) -> None:
    """Where no fork server runs (macOS: fork beside pyarrow's and grpc's threads is
    unsafe there), the run still happens, in the client, and says why."""
    project = _project(tmp_path)
    facts_file = tmp_path / "facts.json"
    code = (
        "import sys; from kafkatest.apps.pytest_forkserver import client; "
        "client.FORK_SERVER_PLATFORM = False; "
        "sys.exit(client.run(['-q', '-p', 'no:cacheprovider']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=project,
        env={**forkserver_env, "FACTS_FILE": str(facts_file)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "1 failed, 1 passed" in done.stdout
    assert done.stderr.startswith(
        "kafkatest pytest: running pytest without its fork server: it runs on Linux only"
    )
    facts = json.loads(facts_file.read_text())
    assert facts["ppid"] == os.getpid()  # the client itself ran it: this test's child
    assert _servers(forkserver_env) == []
