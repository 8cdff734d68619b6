"""What the last export was made from, so that a sensor knows when the export is behind the PDFs.

An export is made from the corpus's PDFs (which are in the raw folder) and, for each, its last
`validated_chunks` attempt (the manifest says how it ended, in which run). Their fingerprint is
written beside the exports once they are published; when the fingerprint of the stage files
now differs (a PDF built, failed or removed since), the export is behind.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from pocket_assets.core.atomic import write_bytes_atomic
from pocket_assets.stages.registry import VALIDATED_CHUNKS
from pocket_assets.stages.store import PartitionStore

STATE_FILE = "export_state.json"


def export_fingerprint(store: PartitionStore, keys: Sequence[str], strict: bool) -> str:
    """A digest of how each PDF's last `validated_chunks` attempt ended. A PDF no build has reached yet is left
    out: a file dropped into the folder changes nothing the export would ship until it is built (or fails)."""
    digest = hashlib.sha256(f"strict={strict}\n".encode())
    for key in sorted(keys):
        manifest = store.manifest(VALIDATED_CHUNKS, key)
        if manifest is not None:
            digest.update(json.dumps([key, manifest.status, manifest.run_id, manifest.rows]).encode("utf-8") + b"\n")
    return digest.hexdigest()[:32]


def exported_fingerprint(out_dir: Path) -> str | None:
    """The fingerprint the last published export recorded; None before any export (or an unreadable record)."""
    try:
        return json.loads((out_dir / STATE_FILE).read_text(encoding="utf-8"))["fingerprint"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def record_export(out_dir: Path, fingerprint: str, run_id: str) -> None:
    payload = json.dumps({"fingerprint": fingerprint, "run_id": run_id}, indent=2) + "\n"
    write_bytes_atomic(out_dir / STATE_FILE, payload.encode("utf-8"))
