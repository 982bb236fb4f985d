"""Generated reference pages, the catalogue's coverage table and their staleness check."""

from __future__ import annotations

from pathlib import Path

from conftest import ROOT
from firstfault.catalogue import CatalogueEntry, catalogue_problems, load_catalogue
from firstfault.docs import GENERATED, index_page, render_docs, write_docs
from firstfault.knowledge import Knowledge
from firstfault.loader import builtin_dir, load_library

DOCS = ROOT / "docs" / "references"


def pages() -> dict[str, str]:
    return render_docs(load_library(), Knowledge.load(builtin_dir() / "knowledge"), load_catalogue(builtin_dir()))


def test_committed_pages_are_what_the_library_generates():
    expected = pages()
    committed = {p.name: p.read_text(encoding="utf-8") for p in DOCS.glob("*.md")}
    stale = sorted(name for name in expected.keys() | committed.keys() if expected.get(name) != committed.get(name))
    assert not stale, f"docs/references is stale ({', '.join(stale[:5])}): run `firstfault signatures docs`"


def test_every_reference_has_a_page_and_the_index_links_it():
    generated = pages()
    library = load_library()
    for ref_id, ref in library.references.items():
        assert generated[f"{ref_id}.md"].startswith(GENERATED)
        assert f"]({ref_id}.md)" in generated["index.md"], ref_id
    assert "| `ncclSystemError` (2) |" in generated["nccl-errors.md"]


def test_catalogue_table_counts_coverage_of_the_real_catalogue():
    catalogue = load_catalogue(builtin_dir())
    covered = sum(1 for e in catalogue if e.references)
    assert f"The catalogue names {len(catalogue)} failures; {covered} are covered." in pages()["index.md"]


def test_catalogue_table_marks_an_uncovered_entry():
    library = load_library()
    refs = sorted(library.references.values(), key=lambda r: r.id)
    entries = [CatalogueEntry("s", "covered | piped", ("cuda-oom",)), CatalogueEntry("s", "still open", ())]
    index = index_page(refs, entries)
    assert "The catalogue names 2 failures; 1 are covered." in index
    assert "still open | not yet |" in index and "covered \\| piped" in index


def test_catalogue_names_only_known_references():
    entries = [CatalogueEntry("s", "known", ("cuda-oom",)), CatalogueEntry("s", "typo", ("cuda-ooom",))]
    problems = catalogue_problems(entries, set(load_library().references))
    assert len(problems) == 1 and "'cuda-ooom'" in problems[0] and "'typo'" in problems[0]


def test_writing_removes_generated_pages_of_removed_references_only(tmp_path: Path):
    (tmp_path / "gone.md").write_text(GENERATED + "\n# an old reference\n")
    (tmp_path / "notes.md").write_text("# written by hand\n")
    write_docs({"index.md": GENERATED + "\n"}, tmp_path)
    assert sorted(p.name for p in tmp_path.glob("*.md")) == ["index.md", "notes.md"]
