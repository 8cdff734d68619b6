"""PDFs the tests build themselves: good ones with known text, and every kind of bad one."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import pymupdf

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLE_RAW = REPO_ROOT / "data" / "raw"


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


def zero_page_pdf(path: Path) -> Path:
    """A well-formed PDF whose page tree is empty (PyMuPDF refuses to save one)."""
    objects = [b"<</Type/Catalog/Pages 2 0 R>>", b"<</Type/Pages/Kids[]/Count 0>>"]
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


def odd_corpus(raw_dir: Path) -> dict[str, str]:
    """Every kind of file name and content issue 14 lists, beside good PDFs; returns {case: path under raw}.

    Built (or, for the bytes name, created) by the tests, never read from ../shared.
    """
    cases = {
        "good": "fr/reglement.pdf",
        "upper_accents_spaces": "fr/Règlement ÉTÉ 2024.PDF",
        "same_base": "fr/faq.pdf",
        "same_base_nested": "fr/sub/faq.pdf",
        "long_name": f"fr/{LONG_NAME}",
        "splitter_text": "fr/splitter.pdf",
        "splitter_name": "intl/a<chunk_splitter>b.pdf",
        "image_only": "fr/scan.pdf",
        "newline_name": "fr/new\nline.pdf",
        "english": "intl/rules.pdf",
        "broken": "intl/broken.pdf",
        "top_level": "top.pdf",
        "unknown_folder": "de/x.pdf",
    }
    text_pdf(raw_dir / cases["good"], [ARTICLE_FR * 6, ARTICLE_FR * 4])
    text_pdf(raw_dir / cases["upper_accents_spaces"], [ARTICLE_FR * 3 + "Été 2024."])
    text_pdf(raw_dir / cases["same_base"], ["Questions fréquentes sur les tournois. " + ARTICLE_FR * 2])
    text_pdf(raw_dir / cases["same_base_nested"], ["Questions sur les cadences rapides. " + ARTICLE_FR * 3])
    text_pdf(raw_dir / cases["long_name"], [ARTICLE_FR * 2])
    text_pdf(raw_dir / cases["splitter_text"], [ARTICLE_FR * 2 + " <chunk_splitter> " + ARTICLE_FR])
    text_pdf(raw_dir / cases["splitter_name"], [ARTICLE_EN * 3])
    image_only_pdf(raw_dir / cases["image_only"])
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
) -> Path:
    """A single-font document laid out as a word processor prints it: one font and size throughout.

    Each paragraph is wrapped to the text column and set line by line, `space_after` points below it
    (0: paragraphs follow one another with no more space than between lines, as many Word templates
    print). Headings are paragraphs like any other: nothing but their numbering tells them apart. A
    page is added when the column is full.
    """
    document = pymupdf.open()
    left, right, top, bottom = 72.0, 523.0, 72.0, 770.0
    page = document.new_page()
    y = top
    step = fontsize * line_height
    for text in paragraphs:
        lines: list[str] = []
        for word in text.split():
            candidate = f"{lines[-1]} {word}" if lines else word
            if lines and pymupdf.get_text_length(candidate, fontname=fontname, fontsize=fontsize) <= right - left:
                lines[-1] = candidate
            else:
                lines.append(word)
        for line in lines:
            if y + step > bottom:
                page = document.new_page()
                y = top
            page.insert_text((left, y + fontsize), line, fontsize=fontsize, fontname=fontname)
            y += step
        y += space_after
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(path)
    return path
