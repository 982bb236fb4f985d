"""The failure catalogue: every failure the product must know, and the references that cover it."""

from __future__ import annotations

import tomllib
from pathlib import Path

import attrs

CATALOGUE_FILE = "_catalogue.toml"  # a leading underscore keeps the loader from reading it as a reference


@attrs.frozen
class CatalogueEntry:
    section: str
    name: str
    references: tuple[str, ...]


def load_catalogue(signatures_dir: Path) -> list[CatalogueEntry]:
    path = signatures_dir / CATALOGUE_FILE
    if not path.is_file():
        return []
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [CatalogueEntry(e["section"], e["name"], tuple(e.get("references", ()))) for e in data.get("entry", ())]


def catalogue_problems(entries: list[CatalogueEntry], known_ids: set[str]) -> list[str]:
    return [f"{CATALOGUE_FILE}: '{e.name}' names unknown reference '{r}'; use a reference id or leave the list empty"
            for e in entries for r in e.references if r not in known_ids]
