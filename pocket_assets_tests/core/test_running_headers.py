"""Running headers whose text changes with the chapter: "Chapter 1: Introduction 2".

LaTeX book/report classes, Texinfo and many Word documents head each page with the current chapter
or section title and the page number. A chapter of one or two pages shows its header too few times to
repeat; it is still a running line when it sits where the document's running lines sit and either
repeats on a page close by or names a heading of another page. Body text never goes.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf

from pocket_assets.core.extract import extract_pages, iter_rendered_pages
from pocket_assets.core.extract.cleanup import (
    MarginLine,
    header_titles,
    margin_signature,
    numbers_of,
    out_of_step,
    running_in_slots,
    scattered,
    title_key,
)

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


def _line(
    page: int, text: str, y0: float = 50.5, place: str = "top", size: float = 10.9, apart: bool = True
) -> MarginLine:
    signature = margin_signature(place, text)
    return MarginLine(page, signature, place, y0, size, header_titles(text), apart, numbers_of(text))


def _headed_manual(pages: int = 8) -> list[MarginLine]:
    """A manual whose even pages carry "Chapter 2: Basics N" from page 4 on: the running lines' place."""
    return [_line(page, f"Chapter 2: Basics {page}") for page in range(4, pages + 1)]


def test_a_header_names_its_heading_without_label_word_page_number_or_case() -> None:
    assert title_key("1 Introduction") == title_key("Chapter 1: Introduction") == "1 introduction"
    assert "1 introduction" in header_titles("Chapter 1: Introduction 2")
    assert title_key("Appendix C The command-line editor") in header_titles("Appendix C: The command-line editor 101")
    assert title_key("1.3 Stetigkeit") in header_titles("10 1.3. STETIGKEIT")  # odd page: number first
    assert title_key("Acknowledgements") in header_titles("Acknowledgements 2")
    assert header_titles("17") == () and header_titles("Folgerung 3.6") == ("folgerung 3",)


def test_a_chapter_header_shown_once_is_running_when_it_names_a_heading() -> None:
    lines = [*_headed_manual(), _line(2, "Chapter 1: Introduction 2")]
    running = frozenset({margin_signature("top", "Chapter 2: Basics 4")})
    found = running_in_slots(lines, 8, running, frozenset({"1 introduction"}))
    assert found == {margin_signature("top", "Chapter 1: Introduction 2")}


def test_a_chapter_header_on_two_close_pages_is_running_without_a_heading() -> None:
    lines = [*_headed_manual(12), _line(14, "Chapter 9: Bugs 14"), _line(15, "Chapter 9: Bugs 15")]
    running = frozenset({margin_signature("top", "Chapter 2: Basics 4")})
    assert running_in_slots(lines, 15, running, frozenset()) == {margin_signature("top", "Chapter 9: Bugs 14")}


def test_body_lines_stay_even_in_the_running_place_or_naming_a_heading() -> None:
    running = frozenset({margin_signature("top", "Chapter 2: Basics 4")})
    body = [
        _line(2, "Beispiel 11 (Metrik)"),  # at the header's height, once, naming no heading
        _line(3, "Beweis: durch Widerspruch"),
        _line(9, "1 Introduction 7", y0=74.0),  # names a heading, but lower than the running lines
        _line(10, "2 Scope 8", size=14.3),  # names a heading, but larger than the running lines
        _line(11, "2 Scope 9", place="bottom", y0=740.0),  # at the foot, where nothing runs
        _line(5, "Definition 4", apart=False),  # first body lines, close to the text below them:
        _line(6, "Definition 5", apart=False),  # repeated on close pages, never running
    ]
    titles = frozenset({"1 introduction", "2 scope"})
    assert running_in_slots([*_headed_manual(), *body], 12, running, titles) == frozenset()
    # Without running lines in that place (a document with no headers), nothing is added either.
    assert running_in_slots(body, 12, frozenset(), titles) == frozenset()


def test_r_faq_chapter_header_shown_once_is_removed_and_the_section_opens_the_page() -> None:
    rendered = list(iter_rendered_pages(REAL / "tex-chapter-running-headers.pdf"))
    assert rendered[1].removed_lines == ("Chapter 1: Introduction 2",)
    assert rendered[1].content.text.startswith("## 1.5 Feedback\n")
    pages = extract_pages(REAL / "tex-chapter-running-headers.pdf")
    assert all("Chapter 1: Introduction" not in page.text for page in pages)
    assert rendered[0].content.text.startswith("# 1 Introduction\n")  # the heading it names stays


def test_numbered_headings_opening_pages_are_out_of_step_and_running_lines_in_step() -> None:
    lines = [
        _line(24, "Definition 20", y0=56.1), _line(32, "Definition 26", y0=56.1), _line(63, "Definition 54", y0=56.1),
        *[_line(page, f"Page {page - 2} / 40", place="bottom", y0=750.0) for page in range(3, 43)],
        *[_line(page, f"Chapter 2: Basics {page - 4}") for page in range(10, 20)],
        *[_line(page, f"Version 2024 - {number}", place="bottom", y0=760.0)  # numbering restarts after front matter
          for page, number in [(1, 1), (2, 2), (3, 3), (4, 1), (5, 2), (6, 3), (7, 4)]],
    ]
    running = frozenset(line.signature for line in lines)
    assert out_of_step(lines, running) == {margin_signature("top", "Definition 20")}


def test_a_heading_opening_pages_far_apart_is_no_running_line_but_page_counters_stay() -> None:
    lines = [
        *[_line(page, "Übungsaufgaben", y0=58.7, size=14.3) for page in (26, 47, 90)],
        *[_line(page, f"Chapter 2: Basics {page}") for page in range(10, 14)],
        *[_line(page, str(page), place="bottom", y0=750.0) for page in (1, 9, 21)],  # chapter openings' plain footer
        *[_line(page, "Draft", place="bottom", y0=760.0) for page in (3, 5, 7)],  # every other page
    ]
    running = frozenset(line.signature for line in lines)
    assert scattered(lines, running) == {margin_signature("top", "Übungsaufgaben")}


_OPENINGS = {1: "A short list", 4: "The scope below", 5: "Scope", 6: "A second list"}


def _manual_pdf(path: Path) -> Path:
    """Six pages headed "Field guide  N" at the top; body lines in the top band below the header."""
    document = pymupdf.open()
    for number in range(1, 7):
        page = document.new_page(width=612, height=792)
        page.insert_text((72, 36), f"Field guide {number}", fontsize=9)
        body = ["Scope"] if number == 4 else []
        body += ["Note: check the values below." if number in (2, 3) else f"{_OPENINGS[number]} opens this page."]
        body += ["The measured values are read off the gauge and written down in the log."] * 3
        for row, text in enumerate(body):
            page.insert_text((72, 66 + 14 * row), text, fontsize=11, fontname="hebo" if text == "Scope" else "helv")
    document.save(path)
    return path


def test_repeated_body_lines_in_the_top_band_stay(tmp_path: Path) -> None:
    pages = extract_pages(_manual_pdf(tmp_path / "manual.pdf"))
    text = "\n".join(page.text for page in pages)
    assert "Field guide" not in text
    assert text.count("Note: check the values below.") == 2
    assert pages[3].text.startswith("# Scope\n") and "Scope opens this page." in pages[4].text
