"""Which errors are about one PDF, and which are bugs: the one boundary the stage runner applies.

An error about the PDF (it is unreadable, its extraction broke on it, one of its
tables could not be summarized, its chunks failed a gate, or its upstream stage
has no good output) is recorded in that PDF's manifest and the run goes on with
the others. Any other exception is a programming or configuration error: it
fails the step loudly, with its traceback, instead of passing as a bad PDF.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from pocket_assets.core.errors import PdfError
from pocket_assets.core.extract import OcrUnavailableError
from pocket_assets.core.tables.summaries import SummaryError
from pocket_assets.runstate.storage import UpstreamNotReady


class GateFailed(Exception):
    """A PDF whose chunks failed a gate: recorded as failed, its last good output kept."""


# The only exceptions a stage records per PDF; see the module docstring.
PER_PDF_ERRORS: tuple[type[Exception], ...] = (PdfError, SummaryError, GateFailed, UpstreamNotReady)


@contextmanager
def extraction_of(partition_key: str) -> Iterator[None]:
    """Whatever breaks while reading one file's pages is about that file (PyMuPDF and our layout
    reading meet PDFs no test has seen), so it becomes a `PdfError` naming it. A missing OCR engine
    is about the machine, not the file, and stays loud."""
    try:
        yield
    except (PdfError, OcrUnavailableError):
        raise
    except Exception as error:
        raise PdfError(partition_key, f"extraction failed ({type(error).__name__}: {error})") from error
