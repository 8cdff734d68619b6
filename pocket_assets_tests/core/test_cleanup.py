"""Line joining and text cleaning: what a paragraph's text is made of."""

from __future__ import annotations

import re
import string

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
