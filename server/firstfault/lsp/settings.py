"""Server settings from initializationOptions / workspace/didChangeConfiguration, validated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

SEVERITY_NAMES = ("error", "warning", "information", "hint")


@attrs.frozen
class Settings:
    signature_dirs: tuple[str, ...] = ()
    disabled_references: frozenset[str] = frozenset()
    max_diagnostics_per_file: int = 500
    minimum_severity: str = "hint"
    trusted: bool = True
    debounce_ms: int = 300
    # Sibling per-rank logs on disk are read with an open one only up to this many bytes in all.
    sibling_bytes: int = 256 * 2**20

    def effective_signature_dirs(self, workspace_roots: list[Path]) -> list[Path]:
        """Untrusted workspace: directories inside it are ignored (their patterns come from the workspace)."""
        dirs = [Path(d).expanduser() for d in self.signature_dirs]
        if self.trusted:
            return dirs
        return [d for d in dirs if not any(_inside(d, root) for root in workspace_roots)]


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except ValueError:
        return False


def parse(raw: Any) -> tuple[Settings, list[str]]:
    """Accepts {"firstfault": {...}} or the inner object; every invalid value falls back to its default."""
    if isinstance(raw, dict) and isinstance(raw.get("firstfault"), dict):
        raw = raw["firstfault"]
    if raw is None:
        return Settings(), []
    if not isinstance(raw, dict):
        return Settings(), [f"settings must be an object, got {type(raw).__name__}"]
    problems: list[str] = []
    values: dict[str, Any] = {}

    def strings(key: str) -> tuple[str, ...] | None:
        value = raw.get(key)
        if value is None:
            return None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)
        problems.append(f"{key} must be a list of strings")
        return None

    if (dirs := strings("signatureDirectories")) is not None:
        values["signature_dirs"] = dirs
    if (disabled := strings("disabledReferences")) is not None:
        values["disabled_references"] = frozenset(disabled)
    for key, field, low in (("maxDiagnosticsPerFile", "max_diagnostics_per_file", 1), ("debounceMs", "debounce_ms", 0)):
        value = raw.get(key)
        if value is None:
            continue
        if isinstance(value, int) and not isinstance(value, bool) and value >= low:
            values[field] = value
        else:
            problems.append(f"{key} must be an integer >= {low}")
    severity = raw.get("minimumSeverity")
    if severity is not None:
        if isinstance(severity, str) and severity.lower() in SEVERITY_NAMES:
            values["minimum_severity"] = severity.lower()
        else:
            problems.append(f"minimumSeverity must be one of {', '.join(SEVERITY_NAMES)}")
    trusted = raw.get("trusted")
    if trusted is not None:
        if isinstance(trusted, bool):
            values["trusted"] = trusted
        else:
            problems.append("trusted must be true or false")
    return Settings(**values), problems
