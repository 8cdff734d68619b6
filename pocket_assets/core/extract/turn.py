"""Turned pages read as a reader reads them: in the frame where their text runs left to right.

PyMuPDF gives every coordinate on the unrotated page, whatever the page's `/Rotate`
(`page.rect` aside), so a landscape table stored on a portrait page turned 90° comes
out as columns of vertical lines, and reading order, tables and running headers are
all decided on the wrong axis. The same holds for text drawn turned on a page that is
not (a table set sideways by the typesetter). A reader turns the page until the text
runs left to right; so does the scan: the direction most of the page's characters run
in (the text dictionary's line `dir`) names the rotation to read the page at, and the
page is read with PyMuPDF's own matrices for that rotation (`page.rotation_matrix`,
under `page.set_rotation` when the text is turned on the page itself, as PyMuPDF's
`get_textpage` and `find_tables` turn pages for a moment themselves).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pocket_assets.core.mupdf import pymupdf

RIGHT_ANGLE_SLACK = 5.0  # degrees: text this close to a right angle is set square (a skewed scan's OCR too)
MIXED_SHARE = 0.3  # of a page's characters running another way than most: the page is set in two directions


@dataclass(frozen=True, slots=True)
class ReadingFrame:
    """The rotation to read a page at (a `/Rotate` value), and why its order may still be wrong."""

    rotation: int
    warning: str | None = None


def _angle(direction: tuple[float, float]) -> float:
    """The direction a line runs in, in degrees clockwise from left-to-right on the unrotated page."""
    return math.degrees(math.atan2(direction[1], direction[0])) % 360


def reading_frame(data: dict[str, Any], page_rotation: int) -> ReadingFrame:
    """The rotation that makes most of the page's characters run left to right (`data`: its text dictionary).

    Characters, not lines, are counted: a landscape table's many short cells must not
    outvote its few long lines of notes, nor a vertical column header the page's text.
    A page without text keeps its own rotation. The warning names what no rotation
    puts in order: text set askew, or a large share of it running another way.
    """
    square: dict[int, int] = {}
    askew = 0
    for block in data["blocks"]:
        if block.get("type", 0) != 0:
            continue
        for line in block["lines"]:
            characters = sum(len(span["text"].strip()) for span in line["spans"])
            if not characters:
                continue
            angle = _angle(line["dir"])
            quarter = round(angle / 90) % 4
            if abs(angle - 90 * round(angle / 90)) > RIGHT_ANGLE_SLACK:
                askew += characters
            else:
                square[quarter] = square.get(quarter, 0) + characters
    total = askew + sum(square.values())
    if not total:
        return ReadingFrame(page_rotation)
    own = (-page_rotation // 90) % 4  # the page's own reading wins a tie
    quarter = max(sorted(square), key=lambda q: (square[q], q == own)) if square else own
    rotation = (-90 * quarter) % 360
    other = total - square.get(quarter, 0)
    if askew > total / 2:
        return ReadingFrame(rotation, "text set at an angle: its lines may be out of reading order")
    if other >= MIXED_SHARE * total:
        share = round(100 * other / total)
        return ReadingFrame(
            rotation, f"text set in several directions ({share}% of it turned from the rest): may be out of reading order"
        )
    return ReadingFrame(rotation)


@contextmanager
def turned(page: pymupdf.Page, rotation: int) -> Iterator[pymupdf.Page]:
    """The page shown at `rotation` while inside: `page.rect`, `page.rotation_matrix` and `find_tables()`
    then see it as the reader does. The document is in memory and its page is put back as it was."""
    own = page.rotation
    if rotation == own:
        yield page
        return
    page.set_rotation(rotation)
    try:
        yield page
    finally:
        page.set_rotation(own)


def _turned_box(box: tuple[float, float, float, float], matrix: pymupdf.Matrix) -> tuple[float, float, float, float]:
    return tuple(pymupdf.Rect(box) * matrix)  # type: ignore[return-value]


def turned_text(data: dict[str, Any], page: pymupdf.Page) -> dict[str, Any]:
    """The text dictionary in the frame of `page` as shown (`page.rotation_matrix`); itself when not turned."""
    if not page.rotation:
        return data
    return transformed_text(data, page.rotation_matrix, page.rect)


def transformed_text(data: dict[str, Any], matrix: pymupdf.Matrix, rect: pymupdf.Rect) -> dict[str, Any]:
    """The text dictionary with every box, origin and direction that the line reader and the table
    pre-filter read moved by `matrix`, onto a page `rect`; the rest of each span is shared with `data`."""
    turn = pymupdf.Matrix(matrix.a, matrix.b, matrix.c, matrix.d, 0, 0)
    blocks = []
    for block in data["blocks"]:
        if block.get("type", 0) != 0:
            continue
        lines = []
        for line in block["lines"]:
            direction = pymupdf.Point(line["dir"]) * turn
            spans = [
                {**span, "bbox": _turned_box(span["bbox"], matrix), "origin": tuple(pymupdf.Point(span["origin"]) * matrix)}
                for span in line["spans"]
            ]
            lines.append({**line, "bbox": _turned_box(line["bbox"], matrix), "dir": (direction.x, direction.y), "spans": spans})
        blocks.append({**block, "bbox": _turned_box(block["bbox"], matrix), "lines": lines})
    return {**data, "width": rect.width, "height": rect.height, "blocks": blocks}


def turned_words(words: list[tuple], page: pymupdf.Page) -> list[tuple]:
    """`get_text("words")` tuples with their boxes in the frame of `page` as shown."""
    if not page.rotation:
        return words
    matrix = page.rotation_matrix
    return [(*_turned_box(word[:4], matrix), *word[4:]) for word in words]
