"""Verification commands: argv templates filled with validated values from the log, then quoted."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import attrs

from firstfault.flightrecorder import PICKLE_MAGIC, dump_prefix
from firstfault.loader import PLACEHOLDER
from firstfault.model import Command, shell_script

# What a value captured from a log may contain when its kind has no stricter rule (a path, a script name); ASCII
# only, so full-width letters and other scripts' digits never pass for what they look like.
SAFE_VALUE = re.compile(r"[A-Za-z0-9_.:/@%+=,\[\]-]{1,200}")
_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")
_IPV4 = re.compile(r"(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)")
_IPV6 = re.compile(r"[0-9A-Fa-f:.]{2,45}")


def _ip(value: str) -> bool:
    if _IPV4.fullmatch(value):
        return True
    return ":" in value and bool(_IPV6.fullmatch(value)) and value.count("::") <= 1


def _host(value: str) -> bool:
    """A host name (RFC 1123: dot-separated labels of letters, digits and inner hyphens) or an IP address: no
    user@, no scheme, no port, no path."""
    if _ip(value):
        return True
    labels = value.rstrip(".").split(".")
    return len(value) <= 253 and all(_HOST_LABEL.fullmatch(label) for label in labels)


def _number(limit: int):
    return lambda value: value.isascii() and value.isdigit() and 0 < int(value) <= limit


# Each placeholder's kind decides what a value must look like; a name not listed here gets SAFE_VALUE.
_KINDS = {
    "host": _host, "peer": _host, "rdzv_host": _host, "node": _host, "node_ip": _ip,
    "port": _number(65535), "pid": _number(2**22), "idx": _number(10**6),
    "jobid": lambda v: bool(re.fullmatch(r"[0-9]{1,12}(?:_[0-9]{1,9})?(?:\.[0-9]{1,9})?", v)),
    # Linux interface names: at most 15 characters (IFNAMSIZ); an alias or VLAN may carry ':' or '.'.
    "iface": lambda v: bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,14}", v)),
    "hca": lambda v: bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_]{0,31}", v)),
}


def valid(name: str, value: str) -> bool:
    """Whether a value captured from a log may stand for placeholder `name` in a command."""
    if value.startswith("-"):
        return False
    check = _KINDS.get(name)
    return check(value) if check is not None else bool(SAFE_VALUE.fullmatch(value)) and "/../" not in f"/{value}/"
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
        script = shell_script(self.argv)
        return script if script is not None and len(self.argv) == 3 else shlex.join(self.argv)

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "argv": list(self.argv), "command": self.command, "complete": self.complete}


def own_inputs(path: str | None) -> dict[str, str]:
    """Values the user gave rather than the log: the path of the log, when it is a file (text from stdin, a
    selection or a terminal has a name but nothing to run a command on). A pickled Flight Recorder dump is not
    text a command could search, and is what torchfrtrace reads: it gives its folder and its name's prefix instead.
    Two bytes are read: this runs for every hover."""
    if not path or not Path(path).is_file():
        return {}
    try:
        with open(path, "rb") as f:
            head = f.read(2)
    except OSError:
        return {}
    if head in PICKLE_MAGIC:
        return {"dump_dir": str(Path(path).parent), "dump_prefix": dump_prefix(path)}
    return {"log": path}


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
        if value is None or not valid(m.group(1), value):
            complete = False
            return f"<{m.group(1)}>"
        return value

    argv = tuple(PLACEHOLDER.sub(substitute, arg) for arg in command.argv)
    complete = complete and not any(USER_PART.search(arg) for arg in command.argv)
    return VerifyCommand(command.title, argv, complete)
