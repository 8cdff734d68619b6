"""How far OCR's text is from the truth: the character error rate, for the OCR tests and `benchmarks/bench_ocr.py`."""

from __future__ import annotations

import re

_MARKDOWN = re.compile(r"^#+ |[|`*$]|^-{3,}$|\|---", re.MULTILINE)
_LEADERS = re.compile(r"(?:\s*\.){3,}\s*")  # a contents line's dots, spaced ". . ." in type, "......" to OCR


def plain(text: str) -> str:
    """The text without Markdown marks (headings, pipes, fences), dot leaders as one "…" and whitespace
    runs as one space: what OCR and a text layer can both be asked to read."""
    return " ".join(_LEADERS.sub(" … ", _MARKDOWN.sub(" ", text)).split())


def edit_distance(read: str, truth: str) -> int:
    """Levenshtein distance, by Myers' bit-vector algorithm (one Python integer per column of `truth`):
    a page's ~3,000 characters in milliseconds, where the table of the textbook takes seconds."""
    if not truth:
        return len(read)
    mask = (1 << len(truth)) - 1
    positions: dict[str, int] = {}
    for index, char in enumerate(truth):
        positions[char] = positions.get(char, 0) | (1 << index)
    plus, minus, score, last = mask, 0, len(truth), 1 << (len(truth) - 1)
    for char in read:
        equal = positions.get(char, 0)
        vertical = equal | minus
        horizontal = ((((equal & plus) + plus) & mask) ^ plus) | equal
        horizontal_plus = (minus | ~(horizontal | plus)) & mask
        horizontal_minus = plus & horizontal
        if horizontal_plus & last:
            score += 1
        elif horizontal_minus & last:
            score -= 1
        horizontal_plus = ((horizontal_plus << 1) | 1) & mask
        horizontal_minus = (horizontal_minus << 1) & mask
        plus = (horizontal_minus | ~(vertical | horizontal_plus)) & mask
        minus = horizontal_plus & vertical
    return score


def character_error_rate(read: str, truth: str) -> float:
    """Edit distance between the two texts made `plain`, over the truth's length."""
    read, truth = plain(read), plain(truth)
    return edit_distance(read, truth) / max(len(truth), 1)
