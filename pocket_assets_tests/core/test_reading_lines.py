"""A page dictionary's spans read into lines: text, size, style, bold lead and margin-label cut."""

from __future__ import annotations

from typing import Any

from pocket_assets.core.extract.reading_order import LabelCut, Line, read_lines


def _span(
    text: str, x0: float, x1: float, font: str = "Times-Roman", size: float = 10.0, flags: int = 4
) -> dict[str, Any]:
    return {"text": text, "font": font, "flags": flags, "size": size, "color": 0, "bbox": (x0, 100.0, x1, 110.0)}


def _page(*lines: list[dict[str, Any]]) -> dict[str, Any]:
    """One block per line, each line's box spanning its spans (MuPDF gives a space between words a span of its own)."""
    blocks = []
    for number, spans in enumerate(lines):
        top = 100.0 + 20 * number
        placed = [{**span, "bbox": (span["bbox"][0], top, span["bbox"][2], top + 10)} for span in spans]
        box = (placed[0]["bbox"][0], top, placed[-1]["bbox"][2], top + 10)
        blocks.append({"type": 0, "bbox": box, "lines": [{"bbox": box, "spans": placed}]})
    return {"width": 600.0, "height": 800.0, "blocks": blocks}


def test_spans_of_one_style_make_one_plain_line() -> None:
    words = [_span("Le", 100, 110), _span(" ", 110, 113), _span("texte", 113, 140), _span(" ", 140, 143)]
    words += [_span("suit", 143, 165), _span(" ", 165, 168), _span("ici.", 168, 185)]
    [[line]] = read_lines(_page(words), 600.0)
    # Four words: too many for a margin label's term.
    style = (line.text, line.size, line.bold, line.mono, line.lead, line.label_cut)
    assert style == ("Le texte suit ici.", 10.0, False, False, "", None)


def test_a_bold_opening_is_the_lead_and_the_term_a_label_might_be() -> None:
    bold = "Times-Bold"
    spans = [
        _span("Article", 100, 130, font=bold, flags=20),
        _span(" ", 130, 133),
        _span("12", 133, 143, font=bold, flags=20),
        _span(" ", 143, 146),
        _span("Le texte", 146, 180),
    ]
    [[line]] = read_lines(_page(spans), 600.0)
    assert line.text == "Article 12 Le texte"
    assert (line.bold, line.lead) == (False, "Article 12")
    assert line.label_cut == LabelCut(chars=len("Article 12"), x1=143, rest_x0=146)


def test_small_capitals_take_the_size_of_their_capitals() -> None:
    spans = [_span("A", 100, 108), _span("RTICLE", 108, 140, size=7.0), _span(" ", 140, 143), _span("17", 143, 153)]
    [[line]] = read_lines(_page(spans), 600.0)
    assert (line.text, line.size) == ("ARTICLE 17", 10.0)


def test_lines_compare_and_hash_by_their_fields() -> None:
    first, again = (Line("Titre", 1.0, 2.0, 3.0, 4.0, 10.0, True, False) for _ in range(2))
    assert first == again and len({first, again}) == 1
    assert hash(first) == hash(again)
