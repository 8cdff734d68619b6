"""PDFs the tests build themselves: good ones with known text, and every kind of bad one."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Collection, Sequence

import pymupdf

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLE_RAW = REPO_ROOT / "data" / "raw"
BOLD_FACES = {"helv": "hebo", "tiro": "tibo", "cour": "cobo"}  # PDF base-14 fonts and their bold faces


def text_pdf(path: Path, pages: Sequence[str], fontsize: float = 11) -> Path:
    """One page per string, wrapped into the page box."""
    document = pymupdf.open()
    for text in pages:
        page = document.new_page()
        if text:
            page.insert_textbox(pymupdf.Rect(72, 72, 540, 770), text, fontsize=fontsize, fontname="helv")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(document.tobytes())  # MuPDF's own save fails on names near the 255-byte limit
    return path


def draw_ruled_table(
    page: pymupdf.Page, cells: Sequence[Sequence[str]], left: float, top: float, width: float = 120, height: float = 24
) -> float:
    """A table of ruled cells (`cells`: rows of texts) drawn from (`left`, `top`); returns its bottom."""
    columns = max(len(row) for row in cells)
    for row in range(len(cells) + 1):
        page.draw_line((left, top + row * height), (left + columns * width, top + row * height))
    for column in range(columns + 1):
        page.draw_line((left + column * width, top), (left + column * width, top + len(cells) * height))
    for row, values in enumerate(cells):
        for column, value in enumerate(values):
            page.insert_text((left + column * width + 6, top + row * height + 16), value, fontsize=11, fontname="helv")
    return top + len(cells) * height


def random_bytes_pdf(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes((index * 7919 + 13) % 256 for index in range(4096)))
    return path


def truncated_pdf(path: Path, good: Path) -> Path:
    data = good.read_bytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data[: len(data) // 2])
    return path


def encrypted_pdf(path: Path) -> Path:
    document = pymupdf.open()
    document.new_page().insert_text((72, 72), "secret text", fontsize=11)
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="user")
    return path


def handmade_pdf(path: Path, objects: Sequence[bytes]) -> Path:
    """A PDF written byte by byte: `objects` numbered from 1 (1 is the catalog), a correct cross-reference
    table, so that what is malformed is only what the objects say (PyMuPDF refuses to save such files)."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(out))
    return path


def zero_page_pdf(path: Path) -> Path:
    """A well-formed PDF whose page tree is empty (PyMuPDF refuses to save one)."""
    return handmade_pdf(path, [b"<</Type/Catalog/Pages 2 0 R>>", b"<</Type/Pages/Kids[]/Count 0>>"])


def _stream(data: bytes) -> bytes:
    return b"<</Length %d>>\nstream\n" % len(data) + data + b"\nendstream"


def _shown_text(text: str, y: int = 770) -> bytes:
    """A content stream showing `text` (ASCII) in Helvetica 11 at height `y` of an A4 page."""
    return b"BT /F1 11 Tf 72 %d Td (%s) Tj ET" % (y, text.encode("ascii"))


def page_tree_pdf(path: Path, count: str, kids: Sequence[int], contents: Sequence[bytes] = ()) -> Path:
    """Pages whose tree says `/Count count` and lists page objects `kids` (1-based, repeats allowed).

    Page i shows `contents[i-1]` (a content stream's operators), by default "Page i of the document...".
    """
    contents = list(contents) or [_shown_text(f"Page {n} of the document, with enough words to be read.") for n in (1, 2)]
    objects = [
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"<</Type/Pages/Count %s/Kids[%s]>>" % (count.encode(), b" ".join(b"%d 0 R" % (2 + 2 * kid) for kid in kids)),
        b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>",
    ]
    for index, operators in enumerate(contents):
        objects.append(
            b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 595 842]/Resources<</Font<</F1 3 0 R>>>>/Contents %d 0 R>>"
            % (5 + 2 * index)
        )
        objects.append(_stream(operators))
    return handmade_pdf(path, objects)


def nested_arrays_pdf(path: Path, in_text: bool, depth: int = 100_000) -> Path:
    """Two pages: the first plain, the second opening `depth` nested arrays between two lines of text.

    Bare in the content stream, the arrays make MuPDF give up on the page (its exception stack
    overflows); as the operand of a text operator (`in_text`), it skips them with syntax errors and
    goes on. Either way what follows them is not read.
    """
    arrays = b"[" * depth + b"(x)" + b"]" * depth
    damage = b"BT /F1 11 Tf 72 740 Td " + arrays + b" TJ ET" if in_text else arrays
    return page_tree_pdf(
        path,
        "2",
        [1, 2],
        [
            _shown_text("A plain first page that MuPDF reads without any trouble at all."),
            _shown_text("Text before the arrays.") + b"\n" + damage + b"\n" + _shown_text("Text after them.", 700),
        ],
    )


def broken_xref_pdf(path: Path, good: Path, how: str) -> Path:
    """`good` with a broken cross-reference table, which MuPDF rebuilds from the objects it finds:
    `how` is "cut" (the table and trailer cut off, as a download that stopped) or "offset" (`startxref`
    pointing elsewhere, as after an editor's careless rewrite)."""
    data = good.read_bytes()
    table = data.rindex(b"\nxref")
    if how == "cut":
        data = data[:table]
    else:
        start = data.rindex(b"startxref")
        data = data[:start] + b"startxref\n%d\n%%%%EOF\n" % (table // 2)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def image_only_pdf(path: Path) -> Path:
    """A page with a picture and no text layer, like a scan."""
    document = pymupdf.open()
    page = document.new_page()
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), False)
    pixmap.set_rect(pixmap.irect, (200, 30, 30))
    page.insert_image(pymupdf.Rect(72, 72, 272, 272), pixmap=pixmap)
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(path)
    return path


def oversized_scan_pdf(path: Path, width: float = 14400, height: float = 14400) -> Path:
    """One page of `width` x `height` points (14400, 200 inches, is the most a PDF page may be) covered by a
    picture and no text: at OCR's 300 dpi the default page's image (60000 pixels a side) is more than MuPDF
    renders, and 8000 x 200 points makes one wider than Tesseract reads (over 32767 pixels)."""
    document = pymupdf.open()
    page = document.new_page(width=width, height=height)
    pixmap = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 64, 16), False)
    pixmap.set_rect(pixmap.irect, (200,))
    page.insert_image(page.rect, pixmap=pixmap)
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(path)
    return path


def scanned_pdf(path: Path, source: Path, dpi: int = 150, rotation: int = 0) -> Path:
    """`source`'s pages as grey images only, rendered at `dpi`: a scan of typeset pages, no text layer.

    With `rotation`, each page is stored turned and shown upright by its `/Rotate` (the image drawn
    turned back on the stored page), as scanners and viewers save a page turned in the viewer.
    """
    scan = pymupdf.open()
    with pymupdf.open(source) as document:
        for page in document:
            pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
            width, height = page.rect.width, page.rect.height
            if rotation % 180:
                width, height = height, width
            target = scan.new_page(width=width, height=height)
            target.insert_image(target.rect, pixmap=pixmap, rotate=rotation)
            target.set_rotation(rotation)
    path.parent.mkdir(parents=True, exist_ok=True)
    scan.save(path)
    return path


ARTICLE_FR = (
    "Article 1 Objet. Le présent règlement fixe les conditions dans lesquelles les compétitions sont "
    "organisées. Chaque joueur doit respecter les règles du jeu et les décisions de l'arbitre. "
)
ARTICLE_EN = (
    "Article 2 Scope. These rules apply to every game played under the authority of the federation. "
    "The arbiter shall see that the rules are strictly observed. "
)


def small_corpus(raw_dir: Path) -> list[str]:
    """Two quick, real PDFs (one per corpus) for Dagster tests that do not need the sample's size."""
    text_pdf(raw_dir / "fr" / "reglement.pdf", [ARTICLE_FR * 6, ARTICLE_FR * 4])
    text_pdf(raw_dir / "intl" / "rules.pdf", [ARTICLE_EN * 5])
    return ["fr/reglement.pdf", "intl/rules.pdf"]


LONG_NAME = "Règlement intérieur " + "très long " * 20 + "fin.pdf"  # 227 characters, 249 bytes in UTF-8
COMMA_NAME = "fr/Règlement intérieur, version 2024.pdf"  # a comma, as French titles have: Dagster's UI splits on them


def odd_corpus(raw_dir: Path) -> dict[str, str]:
    """Every kind of odd file name and content a build must take (or refuse, named), beside good PDFs; returns {case: path under raw}.

    Built (or, for the bytes name, created) by the tests, never read from ../shared.
    """
    cases = {
        "good": "fr/reglement.pdf",
        "upper_accents_spaces": "fr/Règlement ÉTÉ 2024.PDF",
        "comma": COMMA_NAME,
        "same_base": "fr/faq.pdf",
        "same_base_nested": "fr/sub/faq.pdf",
        "long_name": f"fr/{LONG_NAME}",
        "splitter_text": "fr/splitter.pdf",
        "splitter_name": "intl/a<chunk_splitter>b.pdf",
        "image_only": "fr/scan.pdf",
        "ocr_too_large": "fr/plan géant.pdf",
        "newline_name": "fr/new\nline.pdf",
        "english": "intl/rules.pdf",
        "broken": "intl/broken.pdf",
        "top_level": "top.pdf",
        "unknown_folder": "de/x.pdf",
    }
    text_pdf(raw_dir / cases["good"], [ARTICLE_FR * 6, ARTICLE_FR * 4])
    text_pdf(raw_dir / cases["upper_accents_spaces"], [ARTICLE_FR * 3 + "Été 2024."])
    text_pdf(raw_dir / cases["comma"], ["Règlement intérieur, version 2024. " + ARTICLE_FR * 3])
    text_pdf(raw_dir / cases["same_base"], ["Questions fréquentes sur les tournois. " + ARTICLE_FR * 2])
    text_pdf(raw_dir / cases["same_base_nested"], ["Questions sur les cadences rapides. " + ARTICLE_FR * 3])
    text_pdf(raw_dir / cases["long_name"], [ARTICLE_FR * 2])
    text_pdf(raw_dir / cases["splitter_text"], [ARTICLE_FR * 2 + " <chunk_splitter> " + ARTICLE_FR])
    text_pdf(raw_dir / cases["splitter_name"], [ARTICLE_EN * 3])
    image_only_pdf(raw_dir / cases["image_only"])
    oversized_scan_pdf(raw_dir / cases["ocr_too_large"])
    text_pdf(raw_dir / cases["newline_name"], [ARTICLE_FR * 2])
    text_pdf(raw_dir / cases["english"], [ARTICLE_EN * 5])
    random_bytes_pdf(raw_dir / cases["broken"])
    text_pdf(raw_dir / cases["top_level"], [ARTICLE_FR * 2])
    text_pdf(raw_dir / cases["unknown_folder"], [ARTICLE_EN * 2])
    latin1 = os.fsencode(raw_dir / "fr") + b"/r\xe8gles.pdf"  # "règles" in Latin-1: not UTF-8
    text_pdf(Path(os.fsdecode(latin1)), [ARTICLE_FR * 2])
    cases["latin1_name"] = os.fsdecode(latin1)[len(str(raw_dir)) + 1 :]
    return cases


def word_export_pdf(
    path: Path,
    paragraphs: Sequence[str],
    *,
    fontsize: float = 11,
    fontname: str = "helv",
    space_after: float = 0.0,
    line_height: float = 1.2,
    bold: Collection[str] = (),
) -> Path:
    """A single-font document laid out as a word processor prints it: one font and size throughout.

    Each paragraph is wrapped to the text column and set line by line, `space_after` points below it
    (0: paragraphs follow one another with no more space than between lines, as many Word templates
    print). Headings are paragraphs like any other: nothing but their numbering tells them apart,
    unless listed in `bold` (set in the font's bold face, same size). A page is added when the column
    is full.
    """
    document = pymupdf.open()
    left, right, top, bottom = 72.0, 523.0, 72.0, 770.0
    page = document.new_page()
    y = top
    step = fontsize * line_height
    for text in paragraphs:
        font = BOLD_FACES[fontname] if text in bold else fontname
        lines: list[str] = []
        for word in text.split():
            candidate = f"{lines[-1]} {word}" if lines else word
            if lines and pymupdf.get_text_length(candidate, fontname=font, fontsize=fontsize) <= right - left:
                lines[-1] = candidate
            else:
                lines.append(word)
        for line in lines:
            if y + step > bottom:
                page = document.new_page()
                y = top
            page.insert_text((left, y + fontsize), line, fontsize=fontsize, fontname=font)
            y += step
        y += space_after
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(path)
    return path


def tagged_pdf(path: Path, blocks: Sequence[tuple[str, str]], role_map: dict[str, str] | None = None) -> Path:
    """A one-page tagged PDF as an office suite writes one: each (tag, text) a line in one font and size,
    marked with its structure element (`H1`, `P`, or a custom name the `role_map` maps to a standard one),
    so its headings are told apart by the structure tree alone."""
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 72), " ", fontname="helv", fontsize=11)  # makes /helv a resource of the page
    shown = []
    for mcid, (tag, text) in enumerate(blocks):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        shown.append(f"/{tag} <</MCID {mcid}>> BDC BT /helv 11 Tf 72 {760 - 22 * mcid} Td ({escaped}) Tj ET EMC")
    document.update_stream(page.get_contents()[0], "\n".join(shown).encode("latin-1"))
    root = document.get_new_xref()
    elements = []
    for mcid, (tag, _) in enumerate(blocks):
        element = document.get_new_xref()
        document.update_object(
            element, f"<< /Type /StructElem /S /{tag} /P {root} 0 R /Pg {page.xref} 0 R /K {mcid} >>"
        )
        elements.append(f"{element} 0 R")
    parents = document.get_new_xref()
    document.update_object(parents, f"<< /Nums [0 [{' '.join(elements)}]] >>")
    roles = " ".join(f"/{name} /{standard}" for name, standard in (role_map or {}).items())
    document.update_object(
        root, f"<< /Type /StructTreeRoot /K [{' '.join(elements)}] /ParentTree {parents} 0 R /RoleMap << {roles} >> >>"
    )
    document.xref_set_key(page.xref, "StructParents", "0")
    document.xref_set_key(document.pdf_catalog(), "StructTreeRoot", f"{root} 0 R")
    document.xref_set_key(document.pdf_catalog(), "MarkInfo", "<< /Marked true >>")
    document.save(path)
    return path
