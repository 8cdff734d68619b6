"""PyMuPDF as the library imports it: without its layout model, and pages read the same whatever came first.

Each case runs in a fresh interpreter, since what a process imported first is the point.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
# Its running headers and sections fall apart when MuPDF's character boxes are corrected (PyMuPDF's default).
FIXTURE = REAL / "tex-chapter-running-headers.pdf"
EXTRACT = f"""
import json, sys
from pathlib import Path
from pocket_assets.core.extract import extract_pages
from pocket_assets.core.records import to_dict
pages = [to_dict(page) for page in extract_pages(Path({str(FIXTURE)!r}))]
print(json.dumps({{"pages": pages, "layout": "pymupdf.layout" in sys.modules, "llm": "pymupdf4llm" in sys.modules}}))
"""


def _run(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_library_imports_pymupdf_without_its_layout_model() -> None:
    alone = _run(EXTRACT)
    assert not alone["layout"] and not alone["llm"]


def test_pages_read_the_same_whether_pymupdf_came_first_with_its_layout_model() -> None:
    alone, after = _run(EXTRACT), _run("import pymupdf\n" + EXTRACT)
    assert after["layout"] and after["llm"]
    assert alone["pages"] == after["pages"]
