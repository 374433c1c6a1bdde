"""The README keeps its promises: the two fresh-machine commands first, every CLI command listed."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from inspector_app.cli import build_parser

README = Path(__file__).resolve().parent.parent / "README.md"


def command_paths(parser: argparse.ArgumentParser, prefix: str = "inspector") -> list[str]:
    paths = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                paths += command_paths(sub, f"{prefix} {name}") or [f"{prefix} {name}"]
    return paths


def test_readme_opens_with_make_run_then_make_test():
    first_block = re.search(r"```\w*\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands == ["make run", "make test"]


def test_every_cli_command_is_in_the_readme():
    text = README.read_text(encoding="utf-8")
    missing = [path for path in command_paths(build_parser()) if path not in text]
    assert not missing, f"README.md does not mention: {missing}"
