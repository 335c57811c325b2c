"""The files kafkatest reads or keeps outside any one test: the per-user cache and the
pytest ini file of the project around the working directory.

Split from `kafkatest.config` (which declares the options these honour): commands run
outside pytest (``kafkatest spark-server start``, ``kafkatest pytest``) read the
project's ini here as its pytest runs do.
"""

from __future__ import annotations

import os
from pathlib import Path

from kafkatest.config import environment


def cache_dir() -> Path:
    """Per-user cache: $KAFKATEST_CACHE_DIR, else $XDG_CACHE_HOME/kafkatest, else ~/.cache."""
    explicit = environment("KAFKATEST_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafkatest"


def project_ini(start: Path | None = None) -> dict[str, object]:
    """The pytest ini options of the project around `start` (default: the working
    directory), for commands run outside pytest (``kafkatest spark-server start``) that
    must honour what the project's ini says, as its pytest runs do.

    Found as pytest finds its ini file, nearest directory first: ``pytest.ini``, then
    ``pyproject.toml`` with ``[tool.pytest.ini_options]``, ``tox.ini`` with ``[pytest]``,
    ``setup.cfg`` with ``[tool:pytest]``. Nothing found: an empty dict.
    """
    import configparser
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - pytest brings tomli below 3.11
        import tomli as tomllib

    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        for name, section in (
            ("pytest.ini", "pytest"),
            ("pyproject.toml", None),
            ("tox.ini", "pytest"),
            ("setup.cfg", "tool:pytest"),
        ):
            path = directory / name
            if not path.is_file():
                continue
            if section is None:
                table = tomllib.loads(path.read_text()).get("tool", {}).get("pytest", {})
                if "ini_options" in table:
                    return dict(table["ini_options"])
                continue
            parser = configparser.ConfigParser(interpolation=None)
            parser.read(path)
            if parser.has_section(section):
                return dict(parser.items(section))
    return {}
