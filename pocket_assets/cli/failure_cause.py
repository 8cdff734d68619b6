"""A step that failed as a whole, said by its cause.

Dagster wraps what a step raised: the step's error is `DagsterExecutionStepExecutionError: Error occurred
while executing op "pdf_stages":` (a resource's, `DagsterResourceFunctionError`), and what our code
raised is its `cause`. The summary names that cause; an error of the system the user fixes (a full or
read-only disk, a permission) is said as such, with what to do, from the errno Python writes in its
message (`[Errno 28] No space left on device`): the run gives back errors as text, not as exceptions.
"""

from __future__ import annotations

import re
from typing import Protocol

from pocket_assets.core.errors import system_fix

_OS_ERROR = re.compile(r"\[Errno (\d+)\] (.*?)(?:: '(.*)')?$")


class ErrorInfo(Protocol):
    """What a Dagster event keeps of an error (its `SerializableErrorInfo`)."""

    @property
    def message(self) -> str: ...

    @property
    def cls_name(self) -> str | None: ...

    @property
    def cause(self) -> ErrorInfo | None: ...

    @property
    def context(self) -> ErrorInfo | None: ...


def root_cause(error: ErrorInfo) -> ErrorInfo:
    """The error under Dagster's wrappers."""
    while (error.cls_name or "").startswith("Dagster") and (error.cause or error.context) is not None:
        error = error.cause or error.context
    return error


def user_fix(error: ErrorInfo) -> str | None:
    """For an error of the system the user fixes (under Dagster's wrappers), what happened and what to do; else None."""
    found = _OS_ERROR.search(_first_line(root_cause(error)))
    return system_fix(OSError(int(found[1]), found[2], found[3])) if found else None


def cause_sentence(error: ErrorInfo) -> str:
    """The error under Dagster's wrappers, in one line: what to do for an error of the system the user fixes,
    else its class and the first line of its message."""
    root = root_cause(error)
    return user_fix(root) or f"{root.cls_name or 'error'}: {_first_line(root)}"


def _first_line(error: ErrorInfo) -> str:
    """The first line of the error's message, without the class Python puts before it ("module.Class: text")."""
    lines = error.message.strip().splitlines()
    first = lines[0] if lines else "unknown error"
    return first.partition(": ")[2] or first
