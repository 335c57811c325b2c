"""The reference pages are generated from the code, so they cannot drift.

Two ways. Pages a reader on a code host should see are generated in full and committed
(`COMMITTED`: the configuration options, ini keys and environment variables from
``kafkatest.config``, the broker settings from ``BrokerSettings``, the faults from the
``@fault`` registry); regenerate them, and the file-format pages of ``file_formats.py``, with::

    python docs/_hooks/reference.py

and ``tests/test_docs_reference.py`` fails while a committed page is stale. Other pages
hold a marker such as ``<!-- generated: cli -->`` that this module, as an mkdocs hook,
replaces at build time: the ``kafkatest`` command's argparse parser, the plugin's
markers (``MARKERS``) and fixtures with their docstrings, and the public names of
``kafkatest`` (rendered by mkdocstrings).
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
    """The flags `kafkatest.config.OPTIONS` declares, with the help pytest shows."""
    from kafkatest.config import OPTIONS

    rows = ["| option | default | what it does |", "| --- | --- | --- |"]
    for option in OPTIONS:
        if option.flag:
            default = option.default
            shown = "" if default in (None, "", ()) else f"`{default}`"
            rows.append(f"| `{option.flag}` | {shown} | {_cell(option.help + option.where())} |")
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
    """Every variable `kafkatest.config.OPTIONS` declares (but those kafkatest sets for
    its own child processes), with the flag or ini key it stands for."""
    from kafkatest.config import OPTIONS

    rows = ["| variable | what it does |", "| --- | --- |"]
    for option in sorted(OPTIONS, key=lambda o: o.env or ""):
        if option.env is None or option.internal:
            continue
        also = [f"`{option.flag}`"] if option.flag else []
        also += [f"ini `{option.ini}`"] if option.ini else []
        text = f"{option.help}; also {' and '.join(also)}" if also else option.help
        rows.append(f"| `{option.env}` | {_cell(text)} |")
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


_GENERATED = (
    "<!-- Generated by `python docs/_hooks/reference.py` from {source}: do not edit; "
    "tests/test_docs_reference.py fails while it is stale. -->"
)


def configuration_page() -> str:
    return "\n".join(
        [
            "# Configuration: options, ini keys, environment",
            "",
            _GENERATED.format(source="`kafkatest.config.Config`"),
            "",
            "Every setting is declared once, as a field of `kafkatest.config.Config`; a value",
            "comes from a flag, else a `KAFKATEST_*` variable, else the ini file, else its",
            "default. A bad value stops the run at start with one usage error naming it.",
            "",
            "## Command-line options",
            "",
            options_table(),
            "",
            "## ini keys",
            "",
            "Set them under `[tool.pytest.ini_options]` in `pyproject.toml` (or in `pytest.ini`).",
            "",
            ini_table(),
            "",
            "## Environment variables",
            "",
            environment_table(),
            "",
        ]
    )


def broker_settings_page() -> str:
    """`SETTINGS`: each Kafka property, the emulator's value and the kafka backend's."""
    from kafkatest.emulator.state.broker_settings import SETTINGS

    rows = [
        "| Kafka property | emulator | kafka backend starts with | `config=` on the emulator |",
        "| --- | --- | --- | --- |",
    ]
    for setting in SETTINGS:
        emulator = "acts so (nothing to set)" if setting.field is None else f"`{setting.default}`"
        if isinstance(setting.default, bool):
            emulator = f"`{str(setting.default).lower()}`"
        kafka = f"`{setting.kafka_backend}`" if setting.kafka_backend else "Kafka's default"
        settable = "yes" if setting.field is not None and setting.settable else "no"
        rows.append(f"| `{setting.name}` | {emulator} | {kafka} | {settable} |")
    return "\n".join(
        [
            "# Broker settings",
            "",
            _GENERATED.format(source="`kafkatest.emulator.state.broker_settings`"),
            "",
            "The broker properties kafkatest sets or honours. Where it starts real Kafka with",
            "a value other than Kafka's default (to make tests quick), the emulator runs with",
            "that same value, so a test sees the same timing on both backends. Any other",
            "Kafka property may be given to the `kafka` backend; see",
            "[Broker settings](../how-to/broker-settings.md) for how to set them.",
            "",
            *rows,
            "",
        ]
    )


def faults_page() -> str:
    """Every `@fault`: what it does, its parameters and the backends that can do it."""
    from kafkatest.brokers.registry import BACKENDS
    from kafkatest.faults.registry import all_faults

    rows = ["| fault | what it does | parameters | backends |", "| --- | --- | --- | --- |"]
    for name, spec in sorted(all_faults().items()):
        doc = inspect.getdoc(spec.run) or spec.help
        params = "; ".join(
            f"`{p.name}`{'' if p.required else ' (optional)'}: {p.help}" for p in spec.params
        )
        backends = ", ".join(b for b in BACKENDS if b in spec.backends)
        rows.append(
            f"| `{name}` | {_cell(doc.split(chr(10) * 2)[0])} | {_cell(params) or '-'} "
            f"| {backends} |"
        )
    return "\n".join(
        [
            "# Faults",
            "",
            _GENERATED.format(source="the `@fault` registry (`kafkatest.faults.registry`)"),
            "",
            "Each fault is one function declared with `@fault`; the `kafka_faults` fixture",
            "(`Faults`), the emulator's HTTP control interface, `kafkatest fault` and scenario",
            "files all take it by this name. See [Faults](../how-to/faults.md) for how to use them.",
            "",
            *rows,
            "",
        ]
    )


#: The pages generated in full and committed (path from the repository root).
COMMITTED: dict[str, Callable[[], str]] = {
    "docs/reference/configuration.md": configuration_page,
    "docs/reference/broker-settings.md": broker_settings_page,
    "docs/reference/faults.md": faults_page,
}


def stale_pages() -> list[str]:
    """The committed pages whose text is not what the code generates now."""
    return [
        path
        for path, generate in COMMITTED.items()
        if not (REPOSITORY / path).is_file()
        or (REPOSITORY / path).read_text(encoding="utf-8") != generate()
    ]


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


if __name__ == "__main__":
    sys.path.insert(0, str(REPOSITORY))
    for path, generate in COMMITTED.items():
        (REPOSITORY / path).write_text(generate(), encoding="utf-8")
        print(f"wrote {path}")
    # The file-format pages too: one command leaves no committed page stale (a fault's
    # docstring is on both the faults page and the scenario-file page).
    sys.path.insert(0, str(Path(__file__).parent))
    import file_formats

    file_formats.main()
