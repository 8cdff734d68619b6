"""PyMuPDF as the library reads PDFs with it: `from pocket_assets.core.mupdf import pymupdf`.

PyMuPDF 2.0 imports its bundled layout analyser (`pymupdf.layout`, which builds its ONNX
models on import) and `pymupdf4llm` whenever they can be imported. The library never uses
them: tables are found with `find_tables(use_layout=False)` and unruled ones from the text,
pages are rendered by our own reader. Yet loading them is most of what `import pymupdf`
costs in time and memory, in every process that reads a PDF. So the first import of PyMuPDF
in a process is made with both unavailable, as on an install without them (PyMuPDF imports
them as optional); they stay importable afterwards, by whoever wants them.

Importing `pymupdf4llm` also switched two of MuPDF's process-wide settings, and the
extraction was built and checked under them: characters keep the boxes MuPDF gives them
(PyMuPDF's quad corrections off; line boxes, and so paragraph breaks and tables, follow
from them), and MuPDF's errors about a damaged file are not printed (the page warnings
tell them). They are set here, so pages read the same whatever was imported first.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

UNUSED_PARTS = ("pymupdf.layout", "pymupdf4llm")


@contextmanager
def _unavailable(names: tuple[str, ...]) -> Iterator[None]:
    """Imports of `names` fail inside (a None entry in `sys.modules`); those already imported stay."""
    hidden = [name for name in names if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in hidden:
            if sys.modules.get(name, False) is None:
                del sys.modules[name]


with _unavailable(UNUSED_PARTS if "pymupdf" not in sys.modules else ()):
    import pymupdf

pymupdf.TOOLS.unset_quad_corrections(True)
pymupdf.TOOLS.mupdf_display_errors(False)

__all__ = ["pymupdf"]
