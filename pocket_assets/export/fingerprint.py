"""What the last export published and what it was made from, checked before it is trusted.

An export is made from the folder's plan (the PDFs, which are copies of another, which files are not
built), each PDF's last `validated_chunks` attempt (the manifest says how it ended, in which run) and the
export's settings (the corpora, strict export): their fingerprint. Once the files are published,
`record_export` writes beside them, in `export_state.json`, that fingerprint, each file's size and digest,
and which PDFs shipped (their corpus and source).

The export is behind (`export_behind`) when the fingerprint differs (a PDF built, failed, removed or copied
since, a setting changed) and when a published file is missing or is not the bytes the export wrote
(deleted, truncated, edited): a build never calls an export up to date from the record alone. The export
itself reads the record to know which of its previous files it may read back (`changed_files`) and which
PDFs shipped last time (`ExportState.shipped`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import blake3

from pocket_assets.core.atomic import write_bytes_atomic
from pocket_assets.stages.planner import CorpusPlan
from pocket_assets.stages.registry import VALIDATED_CHUNKS
from pocket_assets.stages.store import PartitionStore

STATE_FILE = "export_state.json"
_BLOCK = 8 << 20


@dataclass(frozen=True)
class PublishedFile:
    """One file an export published: its corpus, size and digest (blake3 of its bytes)."""

    corpus: str
    size: int
    digest: str


@dataclass(frozen=True)
class ExportState:
    """What the last export recorded: what it was made from, the files it published (by name), and each PDF it
    shipped with its corpus and source."""

    fingerprint: str
    run_id: str
    files: Mapping[str, PublishedFile]
    shipped: Mapping[str, tuple[str, str]]


def export_fingerprint(store: PartitionStore, plan: CorpusPlan, corpora: Sequence[str], strict: bool) -> str:
    """A digest of what an export of `plan` would be made from. A PDF no build has reached yet is left out: a file
    dropped into the folder changes nothing the export would ship until it is built (or fails)."""
    digest = hashlib.sha256(json.dumps({"strict": strict, "corpora": list(corpora)}).encode("utf-8") + b"\n")
    for pdf in plan.pdfs:
        if pdf.duplicate_of is not None:
            digest.update(json.dumps([pdf.key, "copy of", pdf.duplicate_of]).encode("utf-8") + b"\n")
            continue
        manifest = store.manifest(VALIDATED_CHUNKS, pdf.key)
        if manifest is not None:
            digest.update(json.dumps([pdf.key, manifest.status, manifest.run_id, manifest.rows]).encode("utf-8") + b"\n")
    for name, why in plan.not_built:
        digest.update(json.dumps([name, "not built", why]).encode("utf-8") + b"\n")
    return digest.hexdigest()[:32]


def read_export_state(out_dir: Path) -> ExportState | None:
    """The last export's record; None before any export, or when the record cannot be read (then nothing it
    would say is trusted: the export is behind, and no previous PDF is known to have shipped)."""
    try:
        document = json.loads((out_dir / STATE_FILE).read_text(encoding="utf-8"))
        return ExportState(
            fingerprint=str(document["fingerprint"]),
            run_id=str(document["run_id"]),
            files={
                str(name): PublishedFile(str(entry["corpus"]), int(entry["size"]), str(entry["digest"]))
                for name, entry in document["files"].items()
            },
            shipped={str(key): (str(corpus), str(source)) for key, (corpus, source) in document["shipped"].items()},
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def changed_files(out_dir: Path, state: ExportState) -> dict[str, str]:
    """Each file the last export published that is no longer the bytes it wrote, with why (sorted by name)."""
    changed = {}
    for name, published in sorted(state.files.items()):
        path = out_dir / name
        try:
            size = path.stat().st_size
        except OSError:
            changed[name] = "is missing"
            continue
        if size != published.size:
            changed[name] = f"is {size} bytes, {published.size} were published"
            continue
        try:
            digest = file_digest(path)
        except OSError as error:
            changed[name] = f"cannot be read ({error})"
            continue
        if digest != published.digest:
            changed[name] = "is not the bytes that were published (edited since)"
    return changed


def export_behind(store: PartitionStore, plan: CorpusPlan, corpora: Sequence[str], strict: bool, out_dir: Path) -> str | None:
    """Why the export of `out_dir` is behind the stage files, the folder or itself, in one sentence; None when it is
    what an export now would publish."""
    state = read_export_state(out_dir)
    if state is None:
        return f"no export recorded in {out_dir / STATE_FILE}"
    if state.fingerprint != export_fingerprint(store, plan, corpora, strict):
        return "the PDFs or the settings changed since the last export"
    changed = changed_files(out_dir, state)
    if changed:
        return "; ".join(f"{name} {why}" for name, why in changed.items())
    return None


def record_export(
    out_dir: Path,
    fingerprint: str,
    run_id: str,
    published: Mapping[str, Sequence[Path]],
    shipped: Mapping[str, tuple[str, str]],
) -> None:
    """Write the record of an export just published: `published` holds each corpus's files, `shipped` each PDF
    shipped with its corpus and source."""
    files = {
        path.name: {"corpus": corpus, "size": path.stat().st_size, "digest": file_digest(path)}
        for corpus, paths in sorted(published.items())
        for path in paths
    }
    document = {
        "fingerprint": fingerprint,
        "run_id": run_id,
        "files": dict(sorted(files.items())),
        "shipped": {key: list(shipped[key]) for key in sorted(shipped)},
    }
    write_bytes_atomic(out_dir / STATE_FILE, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))


def file_digest(path: Path) -> str:
    digest = blake3.blake3()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()[:32]
