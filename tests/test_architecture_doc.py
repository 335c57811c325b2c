"""ARCHITECTURE.md stays true to the code where it names it: every file, folder,
module and `file.py:Name` it shows in backticks exists (a path relative to a
folder it describes, such as `classic/model.py`, must exist somewhere in the tree),
and every top-level package of kafkatest is on its layer table."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "kafkatest"
PAGE = (ROOT / "ARCHITECTURE.md").read_text()
#: A backticked path: a/b/, a/b.py, a/b.py:Name, a/b.name (a module's attribute).
PATH = re.compile(r"^[\w.-]*[\w-]+(/[\w.-]+)*/?(:\w+)?$")


def named_paths() -> list[str]:
    tokens = re.findall(r"`([^`\s]+)`", PAGE)
    return sorted({t for t in tokens if ("/" in t or t.endswith(".py")) and PATH.match(t)})


def _candidates(relative: str) -> list[Path]:
    """Files or folders of the repository whose path ends with `relative`."""
    direct = [ROOT / relative, PACKAGE / relative]
    found = [p for p in direct if p.exists()]
    if found:
        return found
    name = relative.rstrip("/")
    return [
        p
        for p in PACKAGE.rglob(Path(name).name)
        if p.as_posix().endswith(name) and "__pycache__" not in p.parts
    ]


def test_every_path_the_page_names_exists() -> None:
    missing = []
    for token in named_paths():
        path, _, name = token.partition(":")
        attribute = ""
        found = _candidates(path)
        if not found and "." in Path(path).name:
            # brokers/process.spawn: module brokers/process.py, its name spawn
            stem, _, attribute = path.rpartition(".")
            found = _candidates(f"{stem}.py")
        if not found:
            missing.append(token)
            continue
        wanted = name or attribute
        if wanted and not any(
            re.search(rf"^\s*(class|def)?\s*{wanted}\b", p.read_text(), re.M)
            for p in found
            if p.is_file()
        ):
            missing.append(token)
    assert not missing, f"ARCHITECTURE.md names what the tree does not have: {missing}"


def test_every_package_of_kafkatest_is_on_the_page() -> None:
    tops = sorted(
        p.stem if p.is_file() else p.name
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__" and not p.stem.startswith("__"))
        or (p.is_dir() and (p / "__init__.py").exists())
    )
    unnamed = [top for top in tops if f"`{top}`" not in PAGE and f"`{top}/`" not in PAGE]
    assert not unnamed, f"kafkatest modules ARCHITECTURE.md does not place: {unnamed}"


def test_every_constant_and_module_name_the_page_names_is_defined() -> None:
    """`FAULT_MODULES`, `clocks.MovableClock`: what the page names by name exists."""
    source = "\n".join(p.read_text() for p in PACKAGE.rglob("*.py"))
    tokens = set(re.findall(r"`([^`\s]+)`", PAGE))
    missing = []
    for token in sorted(tokens):
        if re.fullmatch(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)+", token) and token != "KAFKATEST_*":
            if not re.search(rf"^\s*{token}\b[^=\n]*=", source, re.M):
                missing.append(token)
        elif _names_code(token) and not _module_name_exists(token):
            missing.append(token)
    assert not missing, f"ARCHITECTURE.md names what the code does not define: {missing}"


def _module_name_exists(token: str) -> bool:
    """`registry.FAULT_MODULES`, `kafkatest.apps.standalone`: a module of kafkatest (its
    path may be relative, as the page's sections are) and a name in it. A token that
    names no module of kafkatest (`kafka_broker.clock`, a fixture's attribute) passes,
    unless it starts with kafkatest."""
    dotted = token.removeprefix("kafkatest.")
    for module, name in ((dotted, ""), tuple(dotted.rsplit(".", 1))):
        if not module:
            continue
        tail = module.replace(".", "/")
        files = [
            p
            for p in PACKAGE.rglob("*.py")
            if p.as_posix().endswith((f"/{tail}.py", f"/{tail}/__init__.py"))
        ]
        if files:
            return not name or any(re.search(rf"\b{name}\b", p.read_text()) for p in files)
    return not token.startswith("kafkatest.")


def _names_code(token: str) -> bool:
    """A module of kafkatest (`kafkatest.apps.standalone`) or a class or constant in one
    (`clocks.MovableClock`), not an attribute of an object (`settings.spark_server`)."""
    if not re.fullmatch(r"[a-z_]+(\.[a-z_]+)*\.[A-Za-z_]\w*", token) or token.endswith(".py"):
        return False
    return token.startswith("kafkatest.") or token.rpartition(".")[2][0].isupper()
