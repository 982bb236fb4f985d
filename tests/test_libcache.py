"""The parsed-library cache: the same library warm or cold, and a changed or damaged file never slips through."""

import shutil

import pytest

import firstfault.loader as loader
from firstfault.libcache import cache_path
from firstfault.loader import load_library


def _shape(library):
    """Everything a reference's patterns decide, regexes by their source."""
    return {rid: [(p.id, p.literals, p.regex.pattern, p.role, p.emitter, p.match, p.near_miss, p.generic, p.needs,
                   p.continuation, p.unless, p.once_per) for p in ref.patterns] + [ref.verify, ref.title]
            for rid, ref in library.references.items()}


@pytest.fixture
def own_library(tmp_path, monkeypatch):
    """A private copy of the built-in library and an empty cache folder."""
    copy = tmp_path / "signatures"
    shutil.copytree(loader.builtin_dir(), copy)
    monkeypatch.setattr(loader, "builtin_dir", lambda: copy)
    monkeypatch.setenv("FIRSTFAULT_CACHE_DIR", str(tmp_path / "cache"))
    return copy


def test_warm_load_gives_the_library_a_cold_load_gives(own_library):
    cold = load_library()
    assert cache_path().is_file()
    warm = load_library()
    assert warm.errors == cold.errors == []
    assert _shape(warm) == _shape(cold) == _shape(load_library(use_cache=False))
    assert _shape(load_library()) == _shape(cold)  # what a warm load writes back is what it read
    hit = next(p for p in warm.patterns() if p.id == "torch-cuda-oom")
    assert hit.regex.search("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")


def test_a_file_changed_after_it_was_cached_is_checked_again(own_library):
    load_library()
    path = own_library / "device" / "cuda-oom.toml"
    text = path.read_text()
    near_misses = 'near_miss = [\n  "If reserved but unallocated'
    assert text.count(near_misses) == 1
    path.write_text(text.replace(near_misses, 'near_miss = [\n  "RuntimeError: CUDA out of memory.",\n  "If reserved '
                                               'but unallocated'))
    errors = [str(e) for e in load_library().errors]
    assert any("cuda-oom.toml" in e and "matches its near miss" in e for e in errors), errors


@pytest.mark.parametrize("damage", [b"", b"{not json", b'{"format": 1, "entries": []}', b"\xff\xfe",
                                    b'{"format": 999, "entries": {}}'])
def test_a_damaged_cache_is_ignored(own_library, damage):
    cold = _shape(load_library())
    cache_path().write_bytes(damage)
    library = load_library()
    assert library.errors == []
    assert _shape(library) == cold


def test_an_unwritable_cache_folder_costs_nothing_but_time(own_library, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("FIRSTFAULT_CACHE_DIR", str(blocker / "cache"))
    library = load_library()
    assert library.errors == [] and len(library.references) > 100
