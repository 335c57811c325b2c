"""`kafkatest._ground.project_files.project_ini`: a command run outside pytest reads the project's
pytest ini as pytest would (nearest directory first, pytest's file order)."""

from __future__ import annotations

from pathlib import Path

from kafkatest._ground.project_files import project_ini
from kafkatest.config import Config


def test_pytest_ini_then_pyproject_then_tox_then_setup_cfg(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src" / "job").mkdir(parents=True)
    assert project_ini(project / "src" / "job") == {}
    (project / "setup.cfg").write_text("[tool:pytest]\nspark_extras = protobuf\n")
    assert project_ini(project / "src")["spark_extras"] == "protobuf"
    (project / "tox.ini").write_text("[pytest]\nspark_extras = avro, protobuf\n")
    assert project_ini(project)["spark_extras"] == "avro, protobuf"
    (project / "pyproject.toml").write_text('[tool.pytest.ini_options]\nspark_extras = "avro"\n')
    assert project_ini(project)["spark_extras"] == "avro"
    (project / "pytest.ini").write_text("[pytest]\naddopts = -q\n")
    assert project_ini(project) == {"addopts": "-q"}  # pytest.ini wins even without the key


def test_a_pyproject_without_pytest_options_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / "tox.ini").write_text("[pytest]\nspark_extras = avro\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "job"\n')
    assert project_ini(tmp_path)["spark_extras"] == "avro"


def test_the_environment_wins_over_the_ini(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nspark_extras = avro\n")
    monkeypatch.delenv("KAFKATEST_SPARK_EXTRAS", raising=False)
    assert Config.build(ini=project_ini(tmp_path)).spark_extras == ("avro",)
    monkeypatch.setenv("KAFKATEST_SPARK_EXTRAS", "protobuf")
    assert Config.build(ini=project_ini(tmp_path)).spark_extras == ("protobuf",)
