"""What extraction keeps per document is let go after it: its paragraphs' words and labels are not the next
document's, and kept they would pin the heap a long manual freed."""

from __future__ import annotations

from pocket_assets.core.extract import extract_pages
from pocket_assets.core.extract.headings import _wording
from pocket_assets.core.extract.numbering import read_label
from pocket_assets_tests.pdf_factory import SAMPLE_RAW


def test_a_documents_wordings_and_labels_are_forgotten_once_it_is_extracted() -> None:
    pages = extract_pages(SAMPLE_RAW / "fr" / "f-array.pdf")
    assert any(block.kind == "heading" for page in pages for block in page.blocks), "labels were read"
    assert read_label.cache_info().currsize == 0 and _wording.cache_info().currsize == 0
    assert read_label("Article 3 Objet") is not None, "and are read again as before"
