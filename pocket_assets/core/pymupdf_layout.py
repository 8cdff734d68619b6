"""PyMuPDF without its layout model until a caller asks for it, and without its Markdown helpers.

PyMuPDF 2.0 imports its bundled layout package (`pymupdf.layout`, an ONNX model
and its Python stack) from `pymupdf/__init__`, unconditionally: ~0.65 s and
~55 MiB of the ~1 s and ~140 MiB that `import pymupdf` costs here. Extraction
never uses the model (`find_tables(use_layout=False)`, plain `get_text` modes),
so `core/__init__` calls `defer_layout_model()` before any core module imports
PyMuPDF, and the rare caller that wants the model calls `load_layout_model()`.

It then imports `pymupdf4llm` (Markdown, OCR and batch helpers, with onnxruntime,
tqdm and psutil: ~0.2 s of CPU and ~190 modules, half of what `import pymupdf` costs
without the layout model), which the project never calls. That import also changes
PyMuPDF's settings (ascender/descender "quad corrections" off, MuPDF's messages not
printed), which extraction's output depends on: `SkipMarkdownHelpers` answers that one
import by making the same settings and saying the package is not installed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType

_LAYOUT_MODULE = "pymupdf.layout"
# PyMuPDF prints a one-time advice to install the layout package when `find_tables` runs without it.
_ADVICE_SWITCH = "PYMUPDF_SUGGEST_LAYOUT_ANALYZER"
_MARKDOWN_HELPERS = "pymupdf4llm"


class SkipMarkdownHelpers(MetaPathFinder):
    """Answers PyMuPDF's own `import pymupdf4llm` (at the end of `pymupdf/__init__`) once: makes the
    settings that importing it makes (its `helpers` and `batch_converter` modules, PyMuPDF 2.0.x) and
    raises ModuleNotFoundError, which PyMuPDF takes as the package not installed (its `to_markdown`
    and the like then say so). Any other import of it (a caller's, before or after) is left alone."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != _MARKDOWN_HELPERS:
            return None
        sys.meta_path.remove(self)
        pymupdf = sys.modules.get("pymupdf")
        if pymupdf is None or not hasattr(pymupdf, "TOOLS"):
            return None  # not PyMuPDF's import: the package loads as usual
        pymupdf.TOOLS.unset_quad_corrections(True)
        pymupdf.TOOLS.mupdf_display_errors(False)
        pymupdf.TOOLS.mupdf_display_warnings(False)
        raise ModuleNotFoundError(f"{fullname} is not loaded by pocket_assets", name=fullname)


def defer_layout_model() -> None:
    """Make PyMuPDF's import skip its layout package (a `None` module entry reads as not installed)
    and its Markdown helpers (`SkipMarkdownHelpers`).

    No effect once PyMuPDF is imported: then the model is loaded already.
    """
    if "pymupdf" in sys.modules:
        return
    sys.modules.setdefault(_LAYOUT_MODULE, None)  # type: ignore[arg-type]
    os.environ.setdefault(_ADVICE_SWITCH, "0")
    if _MARKDOWN_HELPERS not in sys.modules and not any(isinstance(f, SkipMarkdownHelpers) for f in sys.meta_path):
        sys.meta_path.insert(0, SkipMarkdownHelpers())


def load_layout_model() -> None:
    """Load and activate PyMuPDF's layout model (its package activates itself on import); idempotent."""
    if _LAYOUT_MODULE in sys.modules and sys.modules[_LAYOUT_MODULE] is None:
        del sys.modules[_LAYOUT_MODULE]
    import pymupdf.layout  # noqa: F401
