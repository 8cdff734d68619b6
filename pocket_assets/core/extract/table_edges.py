"""The edges and characters PyMuPDF's `find_tables()` ("lines" strategy) starts from, as plain tuples.

`find_tables()` re-reads the page's drawings through the Python `get_drawings()`
(a Rect, Point or Quad per coordinate) and copies every character into a dict of
23 keys, then works on dicts. The page's drawings are already read once by the
table pre-filter (`get_cdrawings()`), and the table finder asks only two things of
the characters: is one inside a box of joined graphics, does one with text overlap
a candidate table. This module rebuilds the same edges from those drawings and keeps
each character as a tuple: same arithmetic as `pymupdf.table.make_edges` and
`make_chars`, in the same order, so the grid built on them is the same.
"""

from __future__ import annotations

import string
from array import array
from typing import Any

import pymupdf
import pymupdf.table

SNAP = 3.0  # find_tables' snap_tolerance, also its test for an axis-parallel line
MIN_LENGTH = 3.0  # find_tables' edge_min_length: a thinner rectangle is a drawn line
_WHITE = frozenset(string.whitespace)

Point = tuple[float, float]
Box = tuple[float, float, float, float]
# [x0, top, x1, bottom, width, height, horizontal]: a list, as merging moves and stretches edges.
Edge = list[Any]


class CharBoxes:
    """The page's characters as `find_tables()` reads them (its text flags, small glyph heights).

    `boxes`: every character's (x0, top, x1, bottom, y0, y1), the last two flipped to
    PDF space in single precision as `make_chars` computes them; `texts`: the
    boxes (x0, top, x1, bottom) of characters that are not white space.
    """

    def __init__(self, boxes: list[tuple[float, ...]], texts: list[Box]) -> None:
        self.boxes = boxes
        self.texts = texts

    def any_inside(self, rect: list[float]) -> bool:
        """`pymupdf.table.chars_in_rect`, whose y test compares the flipped y0/y1 with the page's rect."""
        rx0, ry0, rx1, ry1 = rect
        return any(
            rx0 <= x0 and x1 <= rx1 and ry0 <= y0 and ry1 >= y1 for x0, _top, x1, _bottom, y0, y1 in self.boxes
        )

    def any_text_overlapping(self, rect: Box) -> bool:
        """`has_text` of `pymupdf.table.cells_to_tables`: strict overlap with a non-blank character."""
        rx0, rtop, rx1, rbottom = rect
        return any(x0 < rx1 and x1 > rx0 and top < rbottom and bottom > rtop for x0, top, x1, bottom in self.texts)


def read_chars(page: pymupdf.Page, height: float) -> CharBoxes | None:
    """The characters `make_chars` would list, or None where a box is not ordered (MuPDF treats it otherwise).

    `height`: the f of the page's transformation matrix (1, 0, 0, -1, e, height).
    Must run with small glyph heights on, as `find_tables()` does.
    """
    textpage = page.get_textpage(flags=pymupdf.table.FLAGS)
    boxes: list[tuple[float, float, float, float]] = []
    texts: list[Box] = []
    for block in page.get_text("rawdict", textpage=textpage)["blocks"]:
        for line in block["lines"]:
            for span in line["spans"]:
                for char in span["chars"]:
                    box = char["bbox"]
                    if box[0] > box[2] or box[1] > box[3]:
                        return None
                    boxes.append(box)
                    if char["c"] not in _WHITE:
                        texts.append(box)
    flipped = array("f", [height - value for box in boxes for value in (box[3], box[1])])  # C float rounding
    return CharBoxes(
        [(*box, flipped[2 * index], flipped[2 * index + 1]) for index, box in enumerate(boxes)],
        texts,
    )


def _line(p1: Point, p2: Point, clip: Box) -> Edge | None:
    """`make_line`: an axis-parallel (within SNAP) line, cut to the page, as an edge."""
    if not (abs(p1[0] - p2[0]) <= SNAP or abs(p1[1] - p2[1]) <= SNAP):
        return None
    x0, x1 = min(p1[0], p2[0]), max(p1[0], p2[0])
    y0, y1 = min(p1[1], p2[1]), max(p1[1], p2[1])
    if x0 > clip[2] or x1 < clip[0] or y0 > clip[3] or y1 < clip[1]:
        return None
    x0, y0 = clip[0] if x0 < clip[0] else x0, clip[1] if y0 < clip[1] else y0
    x1, y1 = clip[2] if x1 > clip[2] else x1, clip[3] if y1 > clip[3] else y1
    width, height = x1 - x0, y1 - y0
    if width == height == 0:
        return None
    return [x0, y0, x1, y1, width, height, y0 == y1]


def _item_lines(item: tuple[Any, ...]) -> list[tuple[Point, Point]]:
    """The lines one path item stands for: a line, a rectangle's sides (or its middle if thin), a quad's sides."""
    kind = item[0]
    if kind == "l":
        return [(item[1], item[2])]
    if kind == "re":
        x0, y0, x1, y1 = item[1]
        x0, x1 = (x1, x0) if x1 < x0 else (x0, x1)
        y0, y1 = (y1, y0) if y1 < y0 else (y0, y1)
        width, height = max(0, x1 - x0), max(0, y1 - y0)
        if (width <= MIN_LENGTH and width < height) or (height <= MIN_LENGTH and height < width):
            if width < height:
                x = abs(x1 + x0) / 2
                return [((x, y0), (x, y1))]
            y = abs(y1 + y0) / 2
            return [((x0, y), (x1, y))]
        return [((x0, y0), (x0, y1)), ((x0, y1), (x1, y1)), ((x1, y1), (x1, y0)), ((x1, y0), (x0, y0))]
    if kind == "qu":
        ul, ur, ll, lr = item[1]
        return [(ul, ll), (ll, lr), (lr, ur), (ur, ul)]
    return []


def _neighbours(r1: list[float], r2: tuple[float, ...]) -> bool:
    """`are_neighbors` of `make_edges`: some corner of one rectangle within SNAP of the other."""
    if (r2[0] - SNAP <= r1[0] <= r2[2] + SNAP or r2[0] - SNAP <= r1[2] <= r2[2] + SNAP) and (
        r2[1] - SNAP <= r1[1] <= r2[3] + SNAP or r2[1] - SNAP <= r1[3] <= r2[3] + SNAP
    ):
        return True
    return (r1[0] - SNAP <= r2[0] <= r1[2] + SNAP or r1[0] - SNAP <= r2[2] <= r1[2] + SNAP) and (
        r1[1] - SNAP <= r2[1] <= r1[3] + SNAP or r1[1] - SNAP <= r2[3] <= r1[3] + SNAP
    )


def _include(rect: list[float], x: float, y: float) -> None:
    """MuPDF's fz_include_point_in_rect, in place."""
    if x < rect[0]:
        rect[0] = x
    if x > rect[2]:
        rect[2] = x
    if y < rect[1]:
        rect[1] = y
    if y > rect[3]:
        rect[3] = y


def _graphics_boxes(drawings: list[dict[str, Any]], chars: CharBoxes) -> list[list[float]]:
    """`clean_graphics`: the paths' rectangles joined where they almost touch, kept when they hold a character."""
    prects = sorted(set(path["rect"] for path in drawings), key=lambda r: (r[3], r[0]))
    boxes = []
    while prects:
        box = list(prects[0])
        repeat = True
        while repeat:
            repeat = False
            for index in range(len(prects) - 1, 0, -1):
                other = prects[index]
                if _neighbours(box, other):
                    _include(box, other[0], other[1])
                    _include(box, other[2], other[3])
                    del prects[index]
                    repeat = True
        if chars.any_inside(box):
            boxes.append(box)
        del prects[0]
    return boxes


def page_edges(drawings: list[dict[str, Any]], clip: Box, chars: CharBoxes) -> list[Edge]:
    """`make_edges` for the "lines" strategy: every drawn line and rectangle side, then the joined graphics' borders."""
    edges = []
    for path in drawings:
        items = path["items"]
        if path.get("closePath") and items[0][0] == "l" and items[-1][0] == "l":
            items = [*items, ("l", items[-1][2], items[0][1])]
        for item in items:
            for p1, p2 in _item_lines(item):
                edge = _line(p1, p2, clip)
                if edge:
                    edges.append(edge)
    for x0, y0, x1, y1 in _graphics_boxes(drawings, chars):
        for p1, p2 in (((x0, y0), (x1, y0)), ((x0, y1), (x1, y1)), ((x0, y0), (x0, y1)), ((x1, y0), (x1, y1))):
            edge = _line(p1, p2, clip)
            if edge:
                edges.append(edge)
    return edges
