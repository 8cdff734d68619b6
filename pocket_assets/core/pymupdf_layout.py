"""PyMuPDF without its layout model until a caller asks for it.

PyMuPDF 2.0 imports its bundled layout package (`pymupdf.layout`, an ONNX model
and its Python stack) from `pymupdf/__init__`, unconditionally: ~0.65 s and
~55 MiB of the ~1 s and ~140 MiB that `import pymupdf` costs here. Extraction
never uses the model (`find_tables(use_layout=False)`, plain `get_text` modes),
so `core/__init__` calls `defer_layout_model()` before any core module imports
PyMuPDF, and the rare caller that wants the model calls `load_layout_model()`.
"""

from __future__ import annotations

import os
import sys

_LAYOUT_MODULE = "pymupdf.layout"
# PyMuPDF prints a one-time advice to install the layout package when `find_tables` runs without it.
_ADVICE_SWITCH = "PYMUPDF_SUGGEST_LAYOUT_ANALYZER"


def defer_layout_model() -> None:
    """Make PyMuPDF's import skip its layout package (a `None` module entry reads as not installed).

    No effect once PyMuPDF is imported: then the model is loaded already.
    """
    if "pymupdf" in sys.modules:
        return
    sys.modules.setdefault(_LAYOUT_MODULE, None)  # type: ignore[arg-type]
    os.environ.setdefault(_ADVICE_SWITCH, "0")


def load_layout_model() -> None:
    """Load and activate PyMuPDF's layout model (its package activates itself on import); idempotent."""
    if _LAYOUT_MODULE in sys.modules and sys.modules[_LAYOUT_MODULE] is None:
        del sys.modules[_LAYOUT_MODULE]
    import pymupdf.layout  # noqa: F401
