"""Spark Connect's server on every PySpark line: PySpark 4's pip package ships it, 3.5's
does not, so kafkatest resolves `spark-connect_<scala>` for the installed version as it
resolves the connector, and puts it on the server's class path next to the connector.
A warm server is refused, naming the install, where Spark Connect's client is missing.
(No JVM and no Maven here: the resolver's Maven call is replaced; the round trip on each
line is tests/test_spark_server_lines.py.)"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from kafkatest import cli
from kafkatest.errors import SetupError
from kafkatest.jars import maven, resolve
from kafkatest.jars.coordinates import SparkBuild
from kafkatest.spark import server
from kafkatest.spark.session import merged_conf


def _pyspark(tmp_path: Path, version: str, scala: str, ships_connect: bool) -> SparkBuild:
    """An installed PySpark as the resolver sees it: its version and its jars directory."""
    jars = tmp_path / "pyspark-jars"
    jars.mkdir()
    (jars / f"spark-core_{scala}-{version}.jar").write_bytes(b"")
    if ships_connect:
        (jars / f"spark-connect_{scala}-{version}.jar").write_bytes(b"")
    return SparkBuild(version=version, scala_binary=scala, jars_dir=jars)


class _Maven:
    """Maven as the resolver calls it: the coordinates asked for, and which exist."""

    def __init__(self, published: set[str]) -> None:
        self.published = published
        self.asked: list[list[str]] = []

    def resolve(self, coordinates: Sequence[str], *, quiet: bool = False) -> list[Path]:
        self.asked.append(list(coordinates))
        (coordinate,) = coordinates
        if coordinate not in self.published:
            raise maven.ArtifactNotFound(f"Maven could not find {coordinate}")
        artifact, version = coordinate.split(":")[1:]
        return [Path(f"/m2/{artifact}-{version}.jar"), Path("/m2/unused-1.0.0.jar")]


@pytest.fixture
def fake_maven(monkeypatch: pytest.MonkeyPatch) -> _Maven:
    found = _Maven({"org.apache.spark:spark-connect_2.12:3.5.7"})
    monkeypatch.setattr(maven, "resolve", found.resolve)
    monkeypatch.delenv("KAFKATEST_SPARK_JARS_DIR", raising=False)
    monkeypatch.delenv("KAFKATEST_JARS_DIR", raising=False)
    return found


def test_pyspark_35_gets_the_connect_server_of_its_version_from_maven(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_maven: _Maven
) -> None:
    build = _pyspark(tmp_path, "3.5.7", "2.12", ships_connect=False)
    monkeypatch.setattr(resolve, "installed_spark", lambda: build)
    jars = resolve.spark_connect_server_jars(quiet=True)
    assert fake_maven.asked == [["org.apache.spark:spark-connect_2.12:3.5.7"]]
    assert Path("/m2/spark-connect_2.12-3.5.7.jar") in jars
    # On the server's class path, next to the connector's jars (not in their place).
    conf = merged_conf(
        {"spark.jars": "/m2/spark-sql-kafka-0-10_2.12-3.5.7.jar"},
        server.connect_server_conf(15002),
    )
    assert conf["spark.plugins"] == server.CONNECT_PLUGIN
    assert conf["spark.connect.grpc.binding.address"] == "127.0.0.1"
    assert conf["spark.jars"].split(",") == [
        "/m2/spark-sql-kafka-0-10_2.12-3.5.7.jar",
        *(str(jar) for jar in jars),
    ]


def test_an_unpublished_patch_falls_back_within_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_maven: _Maven
) -> None:
    monkeypatch.setattr(
        resolve, "installed_spark", lambda: _pyspark(tmp_path, "3.5.9", "2.12", False)
    )
    jars = resolve.spark_connect_server_jars(quiet=True)
    assert [coordinates[0].rsplit(":", 1)[1] for coordinates in fake_maven.asked] == [
        "3.5.9",
        "3.5.8",
        "3.5.7",
    ]
    assert Path("/m2/spark-connect_2.12-3.5.7.jar") in jars


def test_none_published_names_what_was_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_maven: _Maven
) -> None:
    monkeypatch.setattr(
        resolve, "installed_spark", lambda: _pyspark(tmp_path, "3.4.1", "2.12", False)
    )
    with pytest.raises(
        SetupError, match=r"PySpark 3\.4\.1 does not ship Spark Connect's server.*3\.4\.0"
    ):
        resolve.spark_connect_server_jars(quiet=True)


def test_a_pyspark_that_ships_the_server_adds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_maven: _Maven
) -> None:
    build = _pyspark(tmp_path, "4.0.0", "2.13", ships_connect=True)
    monkeypatch.setattr(resolve, "installed_spark", lambda: build)
    assert resolve.spark_connect_server_jars() == []
    assert fake_maven.asked == []
    assert "spark.jars" not in server.connect_server_conf(15002)


def test_a_jars_directory_holding_the_server_is_used_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_maven: _Maven
) -> None:
    """KAFKATEST_SPARK_JARS_DIR (an offline machine): its jars are all on the class path
    with the connector, so a Connect server among them needs no Maven."""
    monkeypatch.setattr(
        resolve, "installed_spark", lambda: _pyspark(tmp_path, "3.5.7", "2.12", False)
    )
    offline = tmp_path / "offline"
    offline.mkdir()
    (offline / "spark-connect_2.12-3.5.7.jar").write_bytes(b"")
    monkeypatch.setenv("KAFKATEST_SPARK_JARS_DIR", str(offline))
    assert resolve.spark_connect_server_jars() == []
    assert fake_maven.asked == []


def test_merged_conf_joins_jars_once_and_lets_the_caller_win() -> None:
    merged = merged_conf(
        {"spark.jars": "/a.jar,/b.jar", "spark.ui.enabled": "false"},
        {"spark.jars": "/b.jar,/c.jar", "spark.ui.enabled": "true"},
    )
    assert merged == {"spark.jars": "/a.jar,/b.jar,/c.jar", "spark.ui.enabled": "true"}
    assert merged_conf({"spark.ui.enabled": "false"}) == {"spark.ui.enabled": "false"}


def test_start_without_the_connect_client_is_refused_naming_the_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """PySpark installs without its Connect client; a warm server no pytest run here
    could reach is refused before anything starts."""
    monkeypatch.setenv("KAFKATEST_SPARK_SERVER_STATE", str(tmp_path / "spark-server.json"))
    monkeypatch.setattr(server, "_has", lambda module: module not in {"grpc_status", "pyarrow"})

    def no_start(*args: object, **kwargs: object) -> None:
        raise AssertionError("a server was started")

    monkeypatch.setattr(server.subprocess, "Popen", no_start)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["spark-server", "start"]) == 2
    said = capsys.readouterr().err
    assert "warm mode (`kafkatest spark-server start`) needs Spark Connect's client" in said
    assert 'grpcio-status, pyarrow are not installed: pip install "kafkatest[connect]"' in said
    assert not (tmp_path / "spark-server.json").exists()


def test_a_missing_parent_package_is_a_missing_module() -> None:
    """`google.rpc` (googleapis-common-protos) without any `google` package installed."""
    assert not server._has("kafkatest_no_such_package.rpc")
    assert server._has("json")


def test_pysparks_own_distutils_warnings_are_not_shown(pytester: pytest.Pytester) -> None:
    """PySpark 3.5's Connect client warns on every DataFrame call (its LooseVersion
    checks), 4.0's logger on its own `Logger.warn`; a run shows none of those, and
    still shows the same warning from the user's own code."""
    pytester.makepyfile(
        test_noise="""
        import warnings

        MESSAGE = "distutils Version classes are deprecated. Use packaging.version instead."

        def test_calls_pyspark():
            for _ in range(3):
                warnings.warn_explicit(
                    MESSAGE, DeprecationWarning, "utils.py", 37, module="pyspark.sql.pandas.utils"
                )
            warnings.warn_explicit(
                "The 'warn' method is deprecated, use 'warning' instead",
                DeprecationWarning,
                "logger.py",
                221,
                module="pyspark.logger.logger",
            )

        def test_users_own():
            warnings.warn(MESSAGE, DeprecationWarning)
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--kafka-backend=emulator")
    result.assert_outcomes(passed=2, warnings=1)
    result.stdout.fnmatch_lines(["*test_users_own*"])
    result.stdout.no_fnmatch_line("*test_calls_pyspark*")
