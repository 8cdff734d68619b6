"""An exception carried back from a worker process by its parts, and raised again in the caller as itself.

Pickling an exception calls `cls(*args)` to rebuild it, which fails for errors whose
constructor takes other arguments than their message (`PdfError(source, reason)`), so
a worker sends back the type, the arguments and the attributes instead, and the caller
rebuilds the same exception (same type, message and fields) with the worker's traceback
as a note.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CarriedError:
    """What a worker returns instead of raising: enough to raise the same exception in the caller."""

    error_type: type[Exception]
    args: tuple[Any, ...]
    state: dict[str, Any]
    worker_traceback: str

    @classmethod
    def of(cls, error: Exception) -> CarriedError:
        return cls(type(error), error.args, dict(vars(error)), "".join(traceback.format_exception(error)))

    def rebuild(self) -> Exception:
        error = self.error_type.__new__(self.error_type)
        error.args = self.args
        vars(error).update(self.state)
        error.add_note(f"raised in a worker process:\n{self.worker_traceback}")
        return error
