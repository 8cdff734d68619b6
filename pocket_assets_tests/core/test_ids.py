"""`revision8` hashes the whitespace-normalized text a part at a time: the same digest as at once."""

from __future__ import annotations

import hashlib
import re
import sys
import uuid
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from pocket_assets.core import ids

# Whitespace `str.split()` knows beyond ASCII (file separators, NEL, NBSP, line separator, ideographic
# space), and look-alikes it does not split on (zero-width space, word joiner, BOM).
_ODD_SPACES = "\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2007\u200a\u2028\u2029\u202f\u205f\u3000"
_NOT_SPACES = "\u200b\u2060\ufeff"
TEXT = st.text(alphabet=st.sampled_from(list("ab é\n\t\r\f\v" + _ODD_SPACES + _NOT_SPACES)), max_size=120)


def _whole(text: str) -> str:
    return hashlib.sha1(" ".join(text.split()).encode("utf-8")).hexdigest()[:8]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(TEXT, st.integers(1, 12))
def test_revision8_in_parts_is_the_hash_of_the_whole_normalized_text(text: str, part_chars: int) -> None:
    with mock.patch.object(ids, "_HASHED_PART_CHARS", part_chars):
        assert ids.revision8(text) == _whole(text)


def test_revision8_of_a_long_text_is_the_hash_of_the_whole_normalized_text() -> None:
    text = ("Article 3.2  Les forfaits\n\n| a | b |\u3000x\xa0y " * 60_000)[:-7]
    assert len(text) > 2 * ids._HASHED_PART_CHARS
    assert ids.revision8(text) == _whole(text)


def test_the_parts_are_cut_only_where_str_split_splits() -> None:
    """The fact the parts rely on: regex `\\s` and `str.split()` agree on every code point."""
    whitespace = re.compile(r"\s")
    disagree = [
        code for code in range(sys.maxunicode + 1) if bool(whitespace.match(chr(code))) != chr(code).isspace()
    ]
    assert disagree == []


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(), st.text(), st.one_of(st.none(), st.text()), st.integers(1, 9999), st.integers(0, 999))
def test_the_revision_is_read_back_from_any_canonical_id(key: str, text: str, section: str | None, page: int, block: int) -> None:
    revision = ids.revision8(text)
    canonical = ids.canonical_id(ids.doc_uid(key), revision, section, page, block)
    assert ids.canonical_revision(canonical) == revision
    assert ids.canonical_revision(ids.split_canonical_id(canonical)[0]) == revision


def test_a_string_that_is_no_canonical_id_has_no_revision() -> None:
    for text in ("", "abc", "abc|s=1|p=001"):
        try:
            ids.canonical_revision(text)
        except ValueError as error:
            assert repr(text) in str(error)
        else:
            raise AssertionError(f"{text!r} read as a canonical id")


# Markers, spaces of every kind and every line break `str.splitlines` knows, in every arrangement.
MARKDOWN_LINES = st.lists(
    st.sampled_from(
        ("word", "Mot", "12", " ", "\t", "\u00a0", "\x1f", ". ", "; ", "# ", "###### ", "####### ", "- ", "* ", "+", "1. ")
        + ("2) ", "> ", "|", "*", "_", "`", "é", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85")
        + ("\u2028", "\u2029")
    ),
    max_size=60,
).map("".join)
LINE_BY_LINE_NOISE = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s+|\|)|[*_`|]")


@settings(max_examples=500, deadline=None, derandomize=True)
@given(MARKDOWN_LINES)
def test_markdown_removed_from_the_whole_text_is_removed_as_a_line_at_a_time(text: str) -> None:
    """The anchor's definition: each line (`splitlines`) without its markers, stripped, joined by spaces."""
    lines = (LINE_BY_LINE_NOISE.sub("", line).strip() for line in text.splitlines())
    flat = " ".join(" ".join(line for line in lines if line).split())
    assert ids._sentences(text) == [sentence for sentence in ids._SENTENCE_END.split(flat) if sentence]


def test_the_line_breaks_are_those_of_splitlines_and_all_whitespace() -> None:
    breaks = {char for char in map(chr, range(sys.maxunicode + 1)) if len(f"a{char}b".splitlines()) == 2}
    assert set(ids._LINE_BREAKS) == breaks and all(char.isspace() for char in breaks)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(st.characters(blacklist_categories=("Cs",))), st.text(st.characters(blacklist_categories=("Cs",))))
def test_uuids_are_the_standard_library_s_uuid5(document_key: str, chunk_id: str) -> None:
    assert ids.document_uuid(document_key) == str(uuid.uuid5(ids.POCKET_NAMESPACE, f"document:{document_key}"))
    document_id = ids.document_uuid(document_key)
    expected = uuid.uuid5(ids.POCKET_NAMESPACE, f"chunk:{document_id}:{chunk_id}")
    assert ids.chunk_uuid(document_id, chunk_id) == str(expected) and expected.version == 5
