"""Text hygiene: ligatures, odd spaces, hyphenation, page counters and running headers/footers.

Everything here works on short strings or on a few line signatures per page,
so the cross-page pass stays cheap and memory stays bounded on long manuals.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

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

# A line repeated in the same margin on this many pages is a running header or footer;
# a short document (3-4 pages, the header on all but the first) shows it on 2.
RUNNING_MIN_PAGES = 3
SHORT_RUNNING_MIN_PAGES = 2


def clean_text(text: str) -> str:
    """Normalize one span or line: ligatures and private-use bullets mapped, odd spaces plain,
    accents set as separate glyphs composed with their letter, NFC."""
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
    return _SPACE_RUNS.sub(" ", text).strip()


def join_lines(lines: Iterable[str]) -> str:
    """Join a paragraph's lines with spaces, re-gluing words hyphenated at a line end."""
    joined = ""
    for line in lines:
        line = collapse_spaces(line)
        if not line:
            continue
        if not joined:
            joined = line
        elif _HYPHEN_CUT.search(joined) and line[0].islower():
            joined = joined[:-1] + line
        else:
            joined = f"{joined} {line}"
    return joined


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
