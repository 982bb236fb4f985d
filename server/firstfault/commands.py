"""Verification commands: argv templates filled with validated values from the log, then quoted."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import attrs

from firstfault.loader import PLACEHOLDER
from firstfault.model import Command

# What a host, interface, device, port or path captured from a log may contain; anything else is refused.
SAFE_VALUE = re.compile(r"[\w.:/@%+=,\[\]-]{1,200}")
# A part the reference itself leaves to the user (<jobid>, <checkpoint>): the command cannot run as written.
USER_PART = re.compile(r"<[\w-]+>")


@attrs.frozen
class VerifyCommand:
    title: str
    argv: tuple[str, ...]
    complete: bool  # every placeholder was filled with a validated value

    @property
    def command(self) -> str:
        """What a person pastes: the argv shell-quoted; a bare `sh -c SCRIPT` is its script, which is already a
        command line (the loader keeps values from the log out of scripts), so no quotes nest."""
        if len(self.argv) == 3 and self.argv[0] in ("sh", "bash") and self.argv[1] == "-c":
            return self.argv[2]
        return shlex.join(self.argv)

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "argv": list(self.argv), "command": self.command, "complete": self.complete}


def own_inputs(path: str | None) -> dict[str, str]:
    """Values the user gave rather than the log: the path of the log, when it is a file (text from stdin, a
    selection or a terminal has a name but nothing to run a command on)."""
    return {"log": path} if path and Path(path).is_file() else {}


def fill(command: Command, values: dict[str, str], own: dict[str, str] | None = None) -> VerifyCommand:
    """Fill {name} placeholders; a missing or unsafe value stays visible as <name>.

    `values` come from the log and must pass SAFE_VALUE. `own` are the user's own inputs (the log's path):
    any characters are fine since the argv is quoted or run without a shell, but one that starts with '-'
    is made a relative path so no program reads it as an option."""
    complete = True

    def substitute(m: re.Match[str]) -> str:
        nonlocal complete
        if own and (mine := own.get(m.group(1))) is not None:
            return f"./{mine}" if mine.startswith("-") else mine
        value = values.get(m.group(1))
        if value is None or not SAFE_VALUE.fullmatch(value) or value.startswith("-"):
            complete = False
            return f"<{m.group(1)}>"
        return value

    argv = tuple(PLACEHOLDER.sub(substitute, arg) for arg in command.argv)
    complete = complete and not any(USER_PART.search(arg) for arg in command.argv)
    return VerifyCommand(command.title, argv, complete)
