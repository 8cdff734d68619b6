"""Errors that name the file (and page) they are about, so a maintainer knows what to fix; and the errors of the
system (a full or read-only disk, a permission) said as the user's to fix, with what to do."""

from __future__ import annotations

import errno
import os


class PdfError(Exception):
    """A PDF that cannot be used: not a PDF, truncated, encrypted, empty, or a page that fails."""

    def __init__(self, source: str, reason: str, page: int | None = None) -> None:
        self.source = source
        self.reason = reason
        self.page = page
        where = f"{source}, page {page}" if page is not None else source
        super().__init__(f"{where}: {reason}")


class TokenizerError(Exception):
    """A tokenizer that cannot be loaded offline from what was configured."""


# What to do about an error of the system that is no bug of ours: the disk, its permissions, what stands where.
USER_FIXES = {
    errno.ENOSPC: "the disk is full: free space on it, or choose an output folder on another disk (--output-dir)",
    errno.EDQUOT: "the disk quota is used up: free space or raise the quota, or choose another output folder",
    errno.EROFS: "the file system is read-only: make it writable, or choose another output folder (--output-dir)",
    errno.EACCES: "this user may not read or write it: change its permissions, or its folder's",
    errno.EPERM: "this user may not read or write it: change its permissions, or its folder's",
    errno.EFBIG: "a file outgrew the file system's limit or this process's (ulimit -f): raise it or free space",
    errno.ENOTDIR: "a file stands where a folder is expected: move it away",
    errno.EISDIR: "a folder stands where a file is expected: move it away",
    errno.EIO: "the disk reported an input/output error: check the disk",
}


def system_fix(error: BaseException) -> str | None:
    """One sentence for an `OSError` the user fixes (its errno in `USER_FIXES`): what happened, where, and what to
    do; None for any other error."""
    if not isinstance(error, OSError) or error.errno not in USER_FIXES:
        return None
    where = f" ({error.filename})" if error.filename else ""
    return f"{os.strerror(error.errno)}{where}: {USER_FIXES[error.errno]}"
