import gzip
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault.reader import (InputError, TextBytes, ascii_lower, iter_chunks, iter_text_chunks, open_input,
                               original_column, strip_escapes)


def lines_of(data: bytes, chunk_bytes: int = 1 << 20) -> list[str]:
    text = "".join(c.text for c in iter_chunks(io.BytesIO(data), chunk_bytes))
    return text.split("\n")


@pytest.mark.parametrize("data, expected", [
    (b"a\nb\n", ["a", "b", ""]),
    (b"a\r\nb\r\n", ["a", "b", ""]),
    (b"10%\r50%\r100%\ndone", ["10%", "50%", "100%", "done"]),
    (b"bad \xff\xfe byte\n", ["bad \ufffd\ufffd byte", ""]),
    (b"\xef\xbb\xbfwith bom\n", ["with bom", ""]),
    (b"\x1b[31mNCCL WARN\x1b[0m red\n", ["NCCL WARN red", ""]),
    (b"\x1b]633;C\x07[rank1]: x\n", ["[rank1]: x", ""]),
    (b"\x1b]633;E;cmd\x1b\\out\n", ["out", ""]),
    (b"nul\x00inside\n", ["nul\x00inside", ""]),
    (b"", [""]),
], ids=["lf", "crlf", "lone-cr", "invalid-utf8", "bom", "ansi-colour", "osc-bel", "osc-st", "nul", "empty"])
def test_decoding_and_line_ends(data, expected):
    assert lines_of(data) == expected


def test_crlf_split_across_chunks_is_one_line_break():
    data = b"x" * 15 + b"\r\n" + b"y\n"
    assert lines_of(data, chunk_bytes=16) == ["x" * 15, "y", ""]


def test_line_numbers_continue_across_chunks():
    data = b"".join(b"line %d\n" % i for i in range(1, 1001))
    chunks = list(iter_chunks(io.BytesIO(data), chunk_bytes=100))
    assert len(chunks) > 10
    for chunk in chunks:
        assert chunk.text.startswith(f"line {chunk.first_line}\n")


def test_huge_line_is_cut_into_bounded_chunks_without_losing_text():
    data = b"A" * 5000 + b" CUDA out of memory\n" + b"tail\n"
    chunks = list(iter_chunks(io.BytesIO(data), chunk_bytes=1024))
    assert max(len(c.text) for c in chunks) <= 1024
    assert "".join(c.text for c in chunks) == data.decode()


def test_multibyte_character_cut_by_a_forced_chunk_boundary_survives():
    data = ("é" * 1000).encode() + b"\n"
    assert lines_of(data, chunk_bytes=333) == ["é" * 1000, ""]


def test_strip_escapes_maps_columns_back_to_the_original():
    original = "\x1b[1mNCCL\x1b[0m WARN"
    clean, columns = strip_escapes(original)
    assert clean == "NCCL WARN"
    assert original[columns[clean.index("WARN")]:].startswith("WARN")
    assert original[columns[0]] == "N"


# huggingface/text-generation-inference#467 (a dev case of the real-log benchmark): the launcher's coloured log as
# rsyslog wrote it ("#033" for ESC); the same codes with the ESC lost in a paste, and as `cat -v` shows them.
TGI_SYSLOG = ("#033[2m2023-06-16T12:57:41.398047Z#033[0m #033[31mERROR#033[0m #033[2mtext_generation_launcher#033[0m"
              "#033[2m:#033[0m Shard 3 failed to start:")
TGI_CLEAN = "2023-06-16T12:57:41.398047Z ERROR text_generation_launcher: Shard 3 failed to start:"


@pytest.mark.parametrize("original", [TGI_SYSLOG, TGI_SYSLOG.replace("#033", ""), TGI_SYSLOG.replace("#033", "^[")],
                         ids=["rsyslog-octal", "esc-lost", "caret-notation"])
def test_colour_codes_whose_escape_was_rewritten_or_lost_are_removed(original):
    clean, columns = strip_escapes(original)
    assert clean == TGI_CLEAN
    assert original[columns[clean.index("Shard")]:].startswith("Shard")


def test_a_bracketed_code_without_a_reset_on_its_line_stays_text():
    assert strip_escapes("eta [3m20s]")[0] == "eta [3m20s]"


def test_ascii_lower_keeps_positions_for_non_ascii_text():
    text = "İstanbul NCCL WARN"
    assert len(ascii_lower(text)) == len(text)
    assert ascii_lower(text).endswith("nccl warn")


def test_gzip_is_read_transparently(tmp_path):
    path = tmp_path / "rank0.log.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"hello\nworld\n")
    stream, _ = open_input(path)
    assert "".join(c.text for c in iter_chunks(stream)) == "hello\nworld\n"


@pytest.mark.parametrize("make, message", [
    (lambda p: p, "is a directory"),
    (lambda p: p / "missing.log", "no such file"),
], ids=["directory", "missing"])
def test_unreadable_inputs_raise_a_clear_error(tmp_path, make, message):
    with pytest.raises(InputError, match=message):
        open_input(make(tmp_path))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "bc", " ", "\x1b[31m", "\x1b[0m", "\x1b]633;A\x07", "\x1b[1;32m", "#033[2m",
                                 "^[[1m", "[0m"]), max_size=30))
def test_a_column_maps_back_as_the_full_column_map_says(pieces):
    """original_column walks the escapes only; strip_escapes' map, one entry per character, is the reference."""
    original = "".join(pieces)
    clean, columns = strip_escapes(original)
    assert [original_column(original, i, clean) for i in range(len(clean) + 1)] == columns


@pytest.mark.parametrize("parts", [("ab\nc", "d\n", "ef\n"), ("é\nab", "c\n", "\u0130x\n"), ("", "a\n")])
def test_text_in_parts_reads_as_the_joined_text_from_any_offset(parts):
    """An editor buffer and its appends, read unjoined: the chunks of the joined text, from every UTF-8 offset."""
    joined = "".join(parts)
    size = len(joined.encode("utf-8"))
    for offset in range(size + 1):
        expected = [(c.offset, c.first_line, c.text, c.original) for c in iter_text_chunks(joined, offset, 3)]
        assert [(c.offset, c.first_line, c.text, c.original) for c in iter_text_chunks(parts, offset, 3)] == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["", "a", "bc\n", "\n", "\r\n", "é", "\u0130", "\ud800"]), max_size=8),
       st.integers(0, 30), st.integers(0, 30))
def test_text_bytes_reads_any_range_of_the_joined_texts_utf8_form(parts, offset, count):
    """ASCII parts are encoded where they are read, across part boundaries and empty parts; other text whole."""
    expected = "".join(parts).encode("utf-8", "surrogatepass")
    data = TextBytes(parts)
    assert data.size == len(expected)
    assert data.read(offset, count) == expected[offset:offset + count]
