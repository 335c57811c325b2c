"""mkdocs hook: the reference pages are generated from the code, so they cannot drift.

A page holds a marker such as ``<!-- generated: cli -->``; at build time the marker is
replaced by tables made from what kafkatest itself declares: the ``kafkatest`` command's
argparse parser, the pytest plugin's options, ini keys and markers (its
``pytest_addoption`` and ``MARKERS``), its fixtures and their docstrings, and the public
names of ``kafkatest`` (rendered by mkdocstrings). ``tests/test_docs_reference.py``
checks these functions without building the site.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The docs describe this checkout's kafkatest, installed or not.
REPOSITORY = Path(__file__).resolve().parents[2]

#: Variables that are not read from the plugin's option help: where the jars come from.
JAR_VARIABLES = {
    "KAFKATEST_CACHE_DIR": "where jars and manifests are cached (default `~/.cache/kafkatest`)",
    "KAFKATEST_SPARK_JARS_DIR": "use the connector jars in this directory instead of resolving them "
    "(`KAFKATEST_JARS_DIR` is the older name)",
    "KAFKATEST_SPARK_JARS": "`resolve` (default), `packages` (Spark resolves the connector itself "
    "through `spark.jars.packages`) or `none`",
    "KAFKATEST_CONNECTOR_VERSION": "connector version to use instead of the installed PySpark's",
    "KAFKATEST_KAFKA_VERSION": "Apache Kafka release for the `kafka` backend (default 4.1.1)",
    "KAFKATEST_KAFKA_JARS_DIR": "use the broker jars in this directory",
    "KAFKATEST_MAVEN_REPO_URL": "another Maven repository or mirror",
    "KAFKATEST_MAVEN_SETTINGS": "your own Maven `settings.xml`",
    "KAFKATEST_SPARK_LOG_LEVEL": "Spark's own log level (wins over `KAFKATEST_LOG_LEVEL` for Spark)",
    "KAFKATEST_SPARK_SERVER_STATE": "where `kafkatest spark-server` records the warm server "
    "(default: in the cache directory)",
    "KAFKATEST_CONTROL": "`host:port` of a standalone emulator's control interface, for "
    "`kafkatest fault`",
}


class Declared:
    """What the plugin's ``pytest_addoption`` declared, recorded instead of parsed."""

    def __init__(self) -> None:
        self.options: list[tuple[list[str], dict[str, Any]]] = []
        self.ini: list[tuple[str, str, dict[str, Any]]] = []

    def getgroup(self, name: str, description: str = "") -> Declared:
        return self

    def addoption(self, *names: str, **attrs: Any) -> None:
        self.options.append((list(names), attrs))

    def addini(self, name: str, help: str, **attrs: Any) -> None:
        self.ini.append((name, help, attrs))


def declared() -> Declared:
    from kafkatest.plugin.options import pytest_addoption

    recorder = Declared()
    pytest_addoption(recorder)  # type: ignore[arg-type]
    return recorder


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def options_table() -> str:
    rows = ["| option | default | what it does |", "| --- | --- | --- |"]
    for names, attrs in declared().options:
        default = attrs.get("default")
        rows.append(
            f"| `{'`, `'.join(names)}` | {'' if default in (None, []) else f'`{default}`'} "
            f"| {_cell(attrs.get('help', ''))} |"
        )
    return "\n".join(rows)


def ini_table() -> str:
    rows = ["| ini key | type | what it does |", "| --- | --- | --- |"]
    for name, help_text, attrs in declared().ini:
        rows.append(f"| `{name}` | {attrs.get('type') or 'string'} | {_cell(help_text)} |")
    return "\n".join(rows)


def markers_table() -> str:
    from kafkatest.plugin.options import MARKERS

    rows = ["| marker | what it does |", "| --- | --- |"]
    for line in MARKERS:
        signature, _, text = line.partition(": ")
        rows.append(f"| `@pytest.mark.{signature}` | {_cell(text)} |")
    return "\n".join(rows)


def _fixture_scope(value: object) -> tuple[str, bool] | None:
    """(scope, autouse) of a pytest fixture object, or None for anything else."""
    marker = getattr(value, "_fixture_function_marker", None) or getattr(
        value, "_pytestfixturefunction", None
    )
    if marker is None:
        return None
    scope = marker.scope if isinstance(marker.scope, str) else "function"
    return scope, bool(marker.autouse)


def fixtures_table() -> str:
    import kafkatest.pytest_plugin as plugin

    rows = ["| fixture | scope | what it gives |", "| --- | --- | --- |"]
    for name in sorted(vars(plugin)):
        value = getattr(plugin, name)
        found = _fixture_scope(value)
        if found is None or name.startswith("_"):
            continue
        doc = inspect.cleandoc(getattr(value, "__doc__", None) or "")
        rows.append(f"| `{name}` | {found[0]} | {_cell(doc)} |")
    return "\n".join(rows)


def environment_table() -> str:
    found: dict[str, str] = {}
    record = declared()
    helps = [(names[0], attrs.get("help", "")) for names, attrs in record.options]
    helps += [(f"ini {name}", text) for name, text, _ in record.ini]
    for where, text in helps:
        for variable in re.findall(r"\b(KAFKATEST_[A-Z_]+)", text):
            found.setdefault(variable, f"see `{where}` above")
    found.update(JAR_VARIABLES)
    rows = ["| variable | what it does |", "| --- | --- |"]
    rows += [f"| `{name}` | {_cell(text)} |" for name, text in sorted(found.items())]
    return "\n".join(rows)


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    for action in parser._actions:  # argparse keeps sub-parsers only here
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            return [(name, helps.get(name) or "", sub) for name, sub in action.choices.items()]
    return []


def cli_reference() -> str:
    from kafkatest.cli import build_parser

    parser = build_parser()
    parts = [f"`{parser.prog}`: {parser.description}", ""]
    for name, summary, sub in _subcommands(parser):
        parts += [f"## `kafkatest {name}`", "", _cell(summary or sub.description or ""), ""]
        if sub.description and summary:
            parts += [_cell(sub.description), ""]
        parts += ["```text", sub.format_usage().replace("usage: ", "").strip(), "```", ""]
        nested = _subcommands(sub)
        if nested:
            parts += ["| action | what it does |", "| --- | --- |"]
            parts += [f"| `{n}` | {_cell(h)} |" for n, h, _ in nested]
            parts.append("")
            continue
        rows = ["| argument | what it does |", "| --- | --- |"]
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            label = ", ".join(action.option_strings) or action.dest
            text = action.help or ""
            if action.choices:
                text = f"{text} (one of: {', '.join(map(str, action.choices))})".strip()
            shown = action.default not in (None, False, argparse.SUPPRESS)
            if shown and action.option_strings and "default" not in text:
                text = f"{text} (default `{action.default}`)".strip()
            rows.append(f"| `{label}` | {_cell(text)} |")
        parts += [*rows, ""]
    return "\n".join(parts)


def api_reference() -> str:
    """One mkdocstrings block per public name of ``kafkatest``, in its import order."""
    import kafkatest

    names = list(kafkatest._EXPORTS)
    return "\n\n".join(f"::: kafkatest.{name}" for name in names)


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "options": options_table,
    "ini": ini_table,
    "markers": markers_table,
    "fixtures": fixtures_table,
    "environment": environment_table,
    "api": api_reference,
}

MARKER = re.compile(r"<!-- generated: ([a-z]+) -->")


def render(markdown: str) -> str:
    """The page with each marker replaced by its generated text."""
    return MARKER.sub(lambda match: GENERATORS[match.group(1)](), markdown)


def on_config(config: Any) -> Any:
    """Import kafkatest from this checkout (mkdocs restores sys.path after loading hooks)."""
    if str(REPOSITORY) not in sys.path:
        sys.path.insert(0, str(REPOSITORY))
    return config


def on_page_markdown(markdown: str, **_: Any) -> str:
    return render(markdown)
