"""torchelastic error files (TORCHELASTIC_ERROR_FILE, `error.json` under torchrun's --log-dir).

A worker wrapped in `@record` writes the exception that ended it, with its traceback and a timestamp; the
console often shows only a truncated copy of it, or none (output not redirected). Both formats PyTorch
reads (torch/distributed/elastic/multiprocessing/errors/__init__.py, ProcessFailure._get_error_data):

    {"message": {"message": "ValueError: ...",                 # error_handler.record_exception (Python)
                 "extraInfo": {"py_callstack": "Traceback ...", "timestamp": "1796329159"}, "errorCode": 1}}
    {"message": "...", "timestamp": 1796329159}                # the string form (C++ and other writers)

The file becomes text the matcher reads like any log: the traceback (which ends with the exception line), or
the message when there is none.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import attrs

from firstfault.reader import InputError, read_whole

MAX_ERROR_FILE_BYTES = 16 * 1024 * 1024


@attrs.frozen
class ErrorFile:
    message: str
    traceback: str
    timestamp: int | None
    error_code: int | None
    line: int  # the file's line holding "message" (1 for the one-line files torchelastic writes)

    def text(self) -> str:
        body = self.traceback.rstrip("\n") if self.traceback.strip() else self.message
        return body + "\n"

    def wall_time(self) -> time.struct_time | None:
        """The local time torchelastic's summary prints for this failure (it uses datetime.fromtimestamp)."""
        if self.timestamp is None:
            return None
        try:
            return time.localtime(self.timestamp)
        except (OverflowError, OSError, ValueError):
            return None


def looks_like_error_file(head: bytes) -> bool:
    """The first bytes of a JSON object with a "message" key (cheap enough for every .json in a folder)."""
    text = head.lstrip()
    return text.startswith(b"{") and b'"message"' in text[:4096]


def read_error_file(path: str | Path) -> ErrorFile:
    """Raises InputError when the file is not a torchelastic error file (or not whole)."""
    text = read_whole(path, MAX_ERROR_FILE_BYTES, "a torchelastic error file").decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f" at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise InputError(f"{path}: not valid JSON{where} (cut short while it was written?)") from None
    return parse_error_data(data, text, path)


def parse_error_data(data: object, text: str, path: str | Path) -> ErrorFile:
    if not isinstance(data, dict) or "message" not in data:
        raise InputError(f"{path}: a JSON file without a \"message\" field is not a torchelastic error file")
    message = data["message"]
    line = _line_of(text, '"message"')
    if isinstance(message, str):
        return ErrorFile(message, "", _integer(data.get("timestamp")), _integer(data.get("errorCode")), line)
    if not isinstance(message, dict):
        raise InputError(f"{path}: \"message\" is neither text nor an object")
    extra = message.get("extraInfo")
    extra = extra if isinstance(extra, dict) else {}
    callstack = extra.get("py_callstack")
    return ErrorFile(_string(message.get("message")), callstack if isinstance(callstack, str) else "",
                     _integer(extra.get("timestamp")), _integer(message.get("errorCode")), line)


def _line_of(text: str, needle: str) -> int:
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def _string(value: object) -> str:
    return value if isinstance(value, str) else "" if value is None else json.dumps(value)


def _integer(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value) < 20:
        return int(value)
    return None
