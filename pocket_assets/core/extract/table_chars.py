"""`find_tables()`'s list of characters, built without a Rect, a Point and a Matrix per character.

PyMuPDF's table finder first copies every character of the page into a dict
(`pymupdf.table.make_chars`), making three geometry objects per character and
transforming two of them through MuPDF: on a page of a few thousand characters
that is ~60 % of `find_tables()` (measured on the wild corpus's table pages).
`table_chars` builds the very same dicts with plain float arithmetic, for pages
whose transformation matrix is MuPDF's usual flip (1, 0, 0, -1, 0, height): the
flipped y is `height - y` rounded to single precision, as MuPDF's C computes it
in floats (double then single rounding is exact for one subtraction of singles).
Any other page (rotated, a media box off the origin) and any character box
that is not ordered is left to PyMuPDF's own function, so the table finder
sees the same characters either way; a test compares the two on real pages.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pymupdf
import pymupdf.table

_SINGLE = struct.Struct("f")
_pymupdf_make_chars = pymupdf.table.make_chars


def _single(value: float) -> float:
    """`value` rounded to single precision, as a C float holds it."""
    return _SINGLE.unpack(_SINGLE.pack(value))[0]


def table_chars(page: pymupdf.Page, clip: Any = None) -> pymupdf.TextPage:
    """`pymupdf.table.make_chars`: fill the table finder's CHARS for `page`, return the TextPage read.

    Same arguments, same dicts in the same order, same floats to the last bit.
    """
    a, b, c, d, e, height_f = tuple(page.transformation_matrix)
    if (a, b, c, d, e) != (1.0, 0.0, 0.0, -1.0, 0.0):
        return _pymupdf_make_chars(page, clip=clip)
    chars = pymupdf.table.CHARS._list()
    start = len(chars)
    page_number = page.number + 1
    doctop_base = page.rect.height * page.number
    textpage = page.get_textpage(clip=clip, flags=pymupdf.table.FLAGS)
    blocks = page.get_text("rawdict", textpage=textpage)["blocks"]
    for block in blocks:
        for line in block["lines"]:
            cosine, sine = round(line["dir"][0], 4), round(line["dir"][1], 4)
            upright = sine == 0
            for span in sorted(line["spans"], key=lambda s: s["bbox"][0]):
                fontname = span["font"]
                fontsize = span["size"]
                bold = bool(span["flags"] & pymupdf.TEXT_FONT_BOLD or span["char_flags"] & 8)
                color = pymupdf.sRGB_to_pdf(span["color"])
                for char in sorted(span["chars"], key=lambda c: c["bbox"][0]):
                    x0, y0, x1, y1 = char["bbox"]  # floats from MuPDF's C, as Rect() would hold them
                    if x0 > x1 or y0 > y1:  # MuPDF may treat an unordered box otherwise: let it
                        del chars[start:]
                        return _pymupdf_make_chars(page, clip=clip)
                    origin_x, origin_y = char["origin"]
                    chars.append(
                        {
                            "adv": x1 - x0 if upright else y1 - y0,
                            "bottom": y1,
                            "doctop": y0 + doctop_base,
                            "fontname": fontname,
                            "height": y1 - y0,
                            "matrix": (cosine, -sine, sine, cosine, origin_x + 0.0, _single(height_f - origin_y)),
                            "ncs": "DeviceRGB",
                            "non_stroking_color": color,
                            "non_stroking_pattern": None,
                            "object_type": "char",
                            "page_number": page_number,
                            "size": fontsize if upright else y1 - y0,
                            "stroking_color": color,
                            "stroking_pattern": None,
                            "bold": bold,
                            "text": char["c"],
                            "top": y0,
                            "upright": upright,
                            "width": x1 - x0,
                            "x0": x0,
                            "x1": x1,
                            "y0": _single(height_f - y1),
                            "y1": _single(height_f - y0),
                        }
                    )
    return textpage


@contextmanager
def fast_table_chars() -> Iterator[None]:
    """While inside, `find_tables()` reads the page's characters with `table_chars`."""
    pymupdf.table.make_chars = table_chars
    try:
        yield
    finally:
        pymupdf.table.make_chars = _pymupdf_make_chars
