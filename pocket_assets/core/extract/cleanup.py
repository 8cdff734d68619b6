"""Text hygiene: ligatures, odd spaces, hyphenation, page counters and running headers/footers.

Everything here works on short strings or on a few line signatures per page,
so the cross-page pass stays cheap and memory stays bounded on long manuals.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from pocket_assets.core.extract.numbering import DECIMAL, read_label

# Ligatures MuPDF may leave in place when a font maps them to one code point.
LIGATURES = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "st",
    "\ufb06": "st",
}
# No-break, thin, narrow and other typographic spaces become a plain space;
# soft hyphens and zero-width characters disappear.
ODD_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
INVISIBLES = re.compile("[\u00ad\u200b-\u200d\u2060\ufeff]")
# Bullets of the Symbol and Wingdings fonts, which office suites leave at private-use code points.
PRIVATE_BULLETS = {
    "\uf0b7": "•",
    "\uf0a7": "▪",
    "\uf06e": "▪",
    "\uf0a8": "□",
    "\uf076": "◆",
    "\uf0d8": "➢",
    "\uf0e0": "→",
    "\uf0fc": "✓",
}
_LIGATURE_TABLE = str.maketrans({**LIGATURES, **PRIVATE_BULLETS})
# TeX's old (OT1) fonts set an accent as a glyph of its own before its letter: "mati`eres",
# "pr´esent", "Universit¨at", "´Ecole". Spacing accent -> combining accent, put after the letter.
_COMBINING = {"`": "\u0300", "´": "\u0301", "ˆ": "\u0302", "^": "\u0302", "˜": "\u0303", "¨": "\u0308",
              "˚": "\u030a", "ˇ": "\u030c", "¸": "\u0327"}
# Non-ASCII accents before any letter; ASCII ` and ^ only inside a word (a quote `Figure', code x^2 stay).
_SPACING_ACCENT = re.compile(r"(?:([´ˆ˜¨˚ˇ¸])|(?<=[^\W\d_])([`^]))\s?([^\W\d_])")
_CEDILLA_AFTER = re.compile(r"([cC])\s?¸")
_ENCIRCLED_C = re.compile("[cC]\u20dd")  # "c" with a combining enclosing circle: TeX's \copyright
# An accented capital split from the rest of its word ("É quivalente"); none of these is a French word alone.
_SPLIT_CAPITAL = re.compile(r"\b([ÉÈÊËÎÏÛÇ]) (?=[a-zà-ÿ]{2})")
_SPACE_RUNS = re.compile(r"[ \t]+")
# Every character one of clean_text's mappings starts from: text without any of them is only normalised.
_MAPPED = re.compile(
    "|".join(
        [
            ODD_SPACES.pattern,
            INVISIBLES.pattern,
            "[" + re.escape("".join([*LIGATURES, *PRIVATE_BULLETS, *_COMBINING, "\u20dd", "ÉÈÊËÎÏÛÇ"])) + "]",
        ]
    )
)

# A hyphen at a line end followed by a lowercase letter is a word cut by the typesetter.
_HYPHEN_CUT = re.compile(r"(?<=[^\W\d_])-$")

# Page counters that typesetters put in margins: "page 41 sur 227", "Page 3 of 10",
# "- 12 -", "12", "R01-1/6", "3/10", "p. 4".
PAGE_COUNTER = re.compile(
    r"""^\s*(?:
        (?:page|p\.)\s*\d+(?:\s*(?:sur|of|/)\s*\d+)?
      | [-–—]?\s*\d{1,4}\s*[-–—]?
      | [A-Z]{0,4}\d{0,3}[-_]?\d{1,4}\s*/\s*\d{1,4}
      | [ivxlcdm]{1,7}
    )\s*$""",
    re.IGNORECASE | re.VERBOSE,
)
_DIGITS = re.compile(r"\d+")
_TITLE_TOKEN = re.compile(r"[^\W_]+")
_LETTER = re.compile(r"[^\W\d_]")
_FIRST_WORD = re.compile(r"^[^\W\d_][\w-]*\.?")

# A line repeated in the same margin on this many pages is a running header or footer;
# a short document (3-4 pages, the header on all but the first) shows it on 2.
RUNNING_MIN_PAGES = 3
SHORT_RUNNING_MIN_PAGES = 2
# A line whose text changes with the chapter ("Chapter 1: Introduction 2") runs in the place of the
# document's running lines when it repeats on a page this close, or names a heading of the document.
NEAR_PAGES = 2
SLOT_SLACK = 1.0  # pt: a page template sets its running lines at one height; body lines land anywhere


def clean_text(text: str) -> str:
    """Normalize one span or line: ligatures and private-use bullets mapped, odd spaces plain,
    accents set as separate glyphs composed with their letter, NFC."""
    if text.isascii():
        if "`" not in text and "^" not in text:
            return text  # every mapping below starts from a non-ASCII character or a spacing accent
    elif _MAPPED.search(text) is None:
        return unicodedata.normalize("NFC", text)  # typographic quotes and dashes, accented letters
    text = text.translate(_LIGATURE_TABLE)
    text = INVISIBLES.sub("", text)
    text = ODD_SPACES.sub(" ", text)
    if not text.isascii():
        text = _ENCIRCLED_C.sub("©", text)
        text = _CEDILLA_AFTER.sub(_compose_cedilla, text)
        text = _SPLIT_CAPITAL.sub(r"\1", text)
    if not text.isascii() or "`" in text or "^" in text:
        text = _SPACING_ACCENT.sub(_compose, text)
    return unicodedata.normalize("NFC", text)


def _compose(match: re.Match[str]) -> str:
    """The letter with its accent when Unicode has that accented letter, else the text as it was."""
    accent = match.group(1) or match.group(2)
    composed = unicodedata.normalize("NFC", match.group(3) + _COMBINING[accent])
    return composed if len(composed) == 1 else match.group(0)


def _compose_cedilla(match: re.Match[str]) -> str:
    return unicodedata.normalize("NFC", match.group(1) + "\u0327")


def collapse_spaces(text: str) -> str:
    if "  " not in text and "\t" not in text:
        return text.strip()  # every run of spaces is one already (most lines)
    return _SPACE_RUNS.sub(" ", text).strip()


def join_lines(lines: Iterable[str]) -> str:
    """Join a paragraph's lines with spaces, re-gluing words hyphenated at a line end."""
    parts: list[str] = []
    for line in lines:
        line = collapse_spaces(line)
        if not line:
            continue
        # Only the end of the text so far can be a cut (parts are stripped, so a lone "-" follows a space):
        # looking at its last two characters keeps a long paragraph's join linear.
        if parts and _HYPHEN_CUT.search(parts[-1][-2:]) and line[0].islower():
            parts[-1] = parts[-1][:-1] + line
        else:
            parts.append(line)
    return " ".join(parts)


def is_page_counter(text: str) -> bool:
    return bool(PAGE_COUNTER.match(text))


def margin_signature(position: str, text: str) -> str:
    """What a running header keeps from page to page: its margin and its words, digits masked."""
    return f"{position}:{_DIGITS.sub('#', collapse_spaces(text).lower())}"


def running_signatures(signatures_per_page: Iterable[Iterable[str]], page_count: int) -> frozenset[str]:
    """Margin signatures seen on enough distinct pages to be running headers or footers.

    Enough is 3 pages, or all pages but one when the document has fewer than 5
    (a title page without the header): 2 on a 3-page document. A 2-page document
    repeating a margin line on both pages has it as a running line too.
    """
    needed = max(SHORT_RUNNING_MIN_PAGES, min(RUNNING_MIN_PAGES, page_count - 1))
    counts: Counter[str] = Counter()
    for signatures in signatures_per_page:
        counts.update(set(signatures))
    return frozenset(signature for signature, count in counts.items() if count >= needed)


class MarginLine(NamedTuple):
    """A line that may run from page to page: what it keeps across pages, where it sits, what it names."""

    page: int
    signature: str  # margin_signature of its text
    band: str  # "top" or "bottom" in a margin band, "" for a page counter at the text's edge outside them
    y0: float
    size: float
    titles: tuple[str, ...]  # header_titles of its text: the heading a chapter header may repeat
    apart: bool  # in a band and standing off the page's text by at least its own height
    numbers: tuple[int, ...]  # the numbers its signature masks


def title_key(text: str) -> str:
    """A heading's words and numbers without its label word, punctuation or case.

    "1 Introduction" and "Chapter 1: Introduction" both give "1 introduction", "Appendix C The
    command-line editor" gives "c the command line editor", "3.4 The class" "3 4 the class".
    """
    text = text.strip().lstrip("#\\ ")
    label = read_label(text)
    if label is not None and label.kind != DECIMAL:
        text = _FIRST_WORD.sub("", text, count=1)
    return " ".join(_TITLE_TOKEN.findall(text.lower()))


def header_titles(text: str) -> tuple[str, ...]:
    """The title_keys a running header may carry: without the page number at its end, or at its start.

    "Chapter 1: Introduction 2" names "1 introduction"; "10 1.3. STETIGKEIT" names "1 3 stetigkeit".
    """
    tokens = title_key(text).split()
    titles = []
    if len(tokens) > 1 and tokens[-1].isdigit():
        titles.append(" ".join(tokens[:-1]))
    if len(tokens) > 1 and tokens[0].isdigit():
        titles.append(" ".join(tokens[1:]))
    return tuple(titles)


def running_in_slots(
    lines: Sequence[MarginLine],
    page_count: int,
    running: frozenset[str],
    heading_titles: frozenset[str],
) -> frozenset[str]:
    """Signatures of running lines whose text changes with the chapter, beyond the `running` ones.

    LaTeX book and report classes, Texinfo and many Word documents head each page with the current
    chapter or section title ("Chapter 1: Introduction 2" on even pages, "1.5 Feedback 3" on odd
    ones): a chapter of one or two pages shows its header too few times to repeat. Such a line
    stands off the page's text (`apart`) where the document's repeated running lines stand off it
    (same margin band, same height within SLOT_SLACK, same size, on as many pages as a running line
    needs), and it is one only when its text repeats on a page at most NEAR_PAGES away (a short
    chapter's pages) or names a heading of the document (`heading_titles`, headings out of the
    margins: the line is never the heading itself; an article class heads the page with the section
    that starts on it). A page's first or last body line is as close to the text as lines are
    (a heading "Definition 20" at the top, a table row at the foot), so it is never one, nor are the
    lines the repeated-text rule took in such places.
    """
    needed = max(SHORT_RUNNING_MIN_PAGES, min(RUNNING_MIN_PAGES, page_count - 1))
    anchors: dict[tuple[str, float], list[tuple[float, int]]] = defaultdict(list)
    pages_of: dict[str, set[int]] = defaultdict(set)
    for line in lines:
        pages_of[line.signature].add(line.page)
        if line.signature in running and line.apart:
            anchors[(line.band, line.size)].append((line.y0, line.page))
    found: set[str] = set()
    for line in lines:
        if line.signature in running or line.signature in found or not line.apart:
            continue
        places = anchors.get((line.band, line.size), ())
        if len({page for y0, page in places if abs(y0 - line.y0) <= SLOT_SLACK}) < needed:
            continue
        near = any(0 < abs(other - line.page) <= NEAR_PAGES for other in pages_of[line.signature])
        names_heading = any(title in heading_titles for title in line.titles)
        if near or names_heading:
            found.add(line.signature)
    return frozenset(found)


def numbers_of(text: str) -> tuple[int, ...]:
    return tuple(int(number) for number in _DIGITS.findall(text))


def out_of_step(lines: Sequence[MarginLine], running: frozenset[str]) -> frozenset[str]:
    """Running signatures whose numbers neither stay nor follow the page: body lines, not running lines.

    A running line's numbers are a date or a version (the same from page to page) or the page
    number (the page's index plus a fixed offset; "Page 3 / 10": one of each). A numbered heading
    that happens to open several pages ("Definition 20" on page 24, "Definition 26" on page 32)
    or a column of figures at a page foot repeats its signature with numbers that do neither. Each
    number is judged on the signature's successive lines: half of the steps or more keep its value
    or its offset from the page (numbering restarts after front matter, a chapter number changes).
    """
    series: dict[str, list[MarginLine]] = defaultdict(list)
    for line in lines:
        if line.signature in running and line.numbers:
            series[line.signature].append(line)
    return frozenset(signature for signature, found in series.items() if not _numbers_in_step(found))


def scattered(lines: Sequence[MarginLine], running: frozenset[str]) -> frozenset[str]:
    """Running signatures with words whose pages are all far apart: a heading that happens to open pages.

    A running line runs: it heads consecutive pages, or every other page when odd and even pages
    differ. A heading that opens a page now and then ("Übungsaufgaben" at the top of pages 26, 47
    and 90 of a course) repeats as often without two of its pages within NEAR_PAGES. Page counters
    are left alone: a plain page style on chapter openings only puts them on scattered pages.
    """
    pages_of: dict[str, set[int]] = defaultdict(set)
    for line in lines:
        if line.signature in running and _LETTER.search(line.signature.partition(":")[2]):
            pages_of[line.signature].add(line.page)
    return frozenset(signature for signature, pages in pages_of.items() if _far_apart(sorted(pages)))


def _far_apart(pages: list[int]) -> bool:
    return all(after - before > NEAR_PAGES for before, after in zip(pages, pages[1:]))


def _numbers_in_step(lines: list[MarginLine]) -> bool:
    """Whether each number of the lines (in page order) keeps its value or its page offset on half the steps."""
    width = len(lines[0].numbers)
    same_width = [line for line in lines if len(line.numbers) == width]
    steps = list(zip(same_width, same_width[1:]))
    for position in range(width):
        kept = sum(
            after.numbers[position] == before.numbers[position]
            or after.numbers[position] - after.page == before.numbers[position] - before.page
            for before, after in steps
        )
        if 2 * kept < len(steps):
            return False
    return True
