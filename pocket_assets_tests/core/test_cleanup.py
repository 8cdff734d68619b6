"""Line joining and text cleaning: what a paragraph's text is made of."""

from __future__ import annotations

import re
import string
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from pocket_assets.core.extract.cleanup import clean_text, collapse_spaces, join_lines


def _joined_by_definition(lines: list[str]) -> str:
    """Lines joined one after another: a space between, none after a letter and a hyphen before lowercase."""
    joined = ""
    for line in map(collapse_spaces, lines):
        if not line:
            continue
        if joined and re.search(r"(?<=[^\W\d_])-$", joined) and line[0].islower():
            joined = joined[:-1] + line
        elif joined:
            joined = f"{joined} {line}"
        else:
            joined = line
    return joined


def test_words_cut_at_a_line_end_are_glued_back() -> None:
    assert join_lines(["La docu-", "mentation est com-", "plète"]) == "La documentation est complète"
    assert join_lines(["Jean-", "Pierre"]) == "Jean- Pierre"  # a capital after the hyphen: a compound name
    assert join_lines(["pages 3-", "4"]) == "pages 3- 4"
    assert join_lines(["un tiret", "-", "seul"]) == "un tiret - seul"
    assert join_lines(["  ", "a  b", ""]) == "a b"


@given(st.lists(st.text(alphabet="ab- \t\nÉé1", max_size=8), max_size=12))
def test_join_lines_is_the_line_by_line_join(lines: list[str]) -> None:
    assert join_lines(lines) == _joined_by_definition(lines)


@given(st.text(alphabet=string.printable.replace("`", "").replace("^", "")))
def test_ascii_text_without_accent_marks_is_already_clean(text: str) -> None:
    assert clean_text(text) == text


def test_spacing_accents_and_ligatures_still_cleaned() -> None:
    assert clean_text("mati`eres") == "matières"
    assert clean_text("x^2") == "x^2"
    assert clean_text("\ufb01n") == "fin"


# Non-ASCII text none of clean_text's mappings starts from: typographic quotes, dashes and spaces'
# neighbours, symbols, accented letters precomposed or as a letter and a combining accent.
_UNMAPPED = "ab ,.‘’“”«»—–…•€éèàçôüÀ\u0301\u0300\u0327"


@given(st.text(alphabet=_UNMAPPED))
def test_text_no_mapping_starts_from_is_only_normalised(text: str) -> None:
    assert clean_text(text) == unicodedata.normalize("NFC", text)


def test_every_kind_of_mapped_character_is_still_mapped() -> None:
    assert clean_text("l\u00a0école") == "l école"  # odd space
    assert clean_text("soft\u00adhyphen") == "softhyphen"  # invisible
    assert clean_text("\uf0b7 item ‘a’") == "• item ‘a’"  # private-use bullet beside unmapped quotes
    assert clean_text("pr´esent") == "présent"  # spacing accent
    assert clean_text("Universit¨at — «x»") == "Universität — «x»"
    assert clean_text("\u00c9 quivalente") == "Équivalente"  # accented capital split from its word
    assert clean_text("c\u20dd 2024") == "© 2024"  # encircled c
    assert clean_text("e\u0301cole") == "école"  # only normalised


@given(st.text(alphabet="a \t\n"))
def test_collapse_spaces_folds_runs_of_spaces_and_tabs(text: str) -> None:
    assert collapse_spaces(text) == re.sub(r"[ \t]+", " ", text).strip()
