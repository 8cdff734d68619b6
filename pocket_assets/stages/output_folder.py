"""Where a build may write: never over the system, a home folder or the PDFs themselves.

A build writes and deletes files under its output folder (stage files, temp files of a killed
build, exports). An output folder of `/`, of a home folder or of the raw folder (or one holding it)
would put those writes among files that are not the build's, so such a folder is refused with a
sentence, before anything is written.
"""

from __future__ import annotations

from pathlib import Path


class OutputFolderRefused(ValueError):
    """An output folder a build must not write into; the message says why and what to do."""


def checked_output_dir(output_dir: Path, raw_dir: Path | None = None) -> Path:
    """`output_dir`, or `OutputFolderRefused` when it is `/`, a home folder, or the raw folder or one above it."""
    resolved = output_dir.expanduser().resolve()
    home = Path.home().resolve()
    if resolved == Path(resolved.anchor) or resolved in (home, home.parent):
        raise OutputFolderRefused(
            f"output folder {output_dir} is refused: a build writes and removes files there; "
            "choose a folder of its own, such as data/processed"
        )
    if raw_dir is not None:
        raw = raw_dir.expanduser().resolve()
        if resolved == raw or raw.is_relative_to(resolved):
            raise OutputFolderRefused(
                f"output folder {output_dir} is refused: it holds the raw folder {raw_dir}, whose PDFs a build "
                "must never write among; choose a folder outside it, such as data/processed"
            )
    return output_dir


def within(folder: Path, relative: str) -> Path:
    """`folder / relative`, or ValueError when `relative` is absolute or climbs out of `folder` (`..`).

    A check of the name alone, without a system call: enough for a folder whose content only the build makes
    (the stage store, asked thousands of times by a build of a large corpus), where no key can add a link."""
    if Path(relative).is_absolute() or ".." in Path(relative).parts:
        raise ValueError(f"{relative!r} leaves the folder {folder}")
    return folder / relative


def inside(folder: Path, relative: str) -> Path:
    """`within`, and the file it names, links followed, is still in `folder`: for a folder users fill (the raw
    folder, where a link may point anywhere)."""
    candidate = within(folder, relative)
    if not candidate.resolve().is_relative_to(folder.resolve()):
        raise ValueError(f"{relative!r} leaves the folder {folder} (through a link)")
    return candidate
