"""A process killed in the middle of an export leaves the previous export whole."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pocket_assets.core.records import to_dict
from pocket_assets.export.sdk_lines import parse_sdk_file
from pocket_assets.export.writer import MODE_B_FILE, export_paths
from pocket_assets_tests.export.test_writer import GENERATED, SCHEMA_DIR, document_text, export, make_chunks

_WRITER = """
import json, sys
from pathlib import Path
from pocket_assets.export.writer import write_corpus_exports
from pocket_assets.core.records import chunk_from_dict
rows = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
write_corpus_exports("fr", [chunk_from_dict(row) for row in rows], Path(sys.argv[2]), "2026-03-03T00:00:00Z", Path(sys.argv[3]))
"""


def _kill_mid_write(chunks_file: Path, out_dir: Path, attempts: int = 5) -> list[Path]:
    """Start an export and SIGKILL it once its corpus JSON temp file has content.

    Returns the temp files the killed process left: their presence proves the
    kill landed after writing began and before the renames. Retries in the
    unlikely case the process finished first.
    """
    temp_glob = f".{export_paths('fr', out_dir)[MODE_B_FILE].name}.*.tmp"
    for _ in range(attempts):
        process = subprocess.Popen([sys.executable, "-c", _WRITER, str(chunks_file), str(out_dir), str(SCHEMA_DIR)])
        while process.poll() is None:
            if any(path.stat().st_size > 0 for path in out_dir.glob(temp_glob)):
                os.kill(process.pid, signal.SIGKILL)
                break
            time.sleep(0.002)
        process.wait()
        if process.returncode == -signal.SIGKILL:
            leftovers = sorted(out_dir.glob(".*.tmp"))
            if leftovers:
                return leftovers
    raise AssertionError(f"no kill landed mid-write in {attempts} attempts")


def test_killed_export_leaves_previous_files_readable(tmp_path: Path) -> None:
    out_dir = tmp_path / "processed"
    previous_chunks = make_chunks("regles.pdf", document_text(1, 3))
    previous = export(previous_chunks, out_dir)
    before = {name: path.read_bytes() for name, path in previous.paths.items()}

    big = [chunk for seed in range(40) for chunk in make_chunks(f"doc{seed:02d}.pdf", document_text(seed, 12))]
    chunks_file = tmp_path / "chunks.json"
    chunks_file.write_text(json.dumps([to_dict(chunk) for chunk in big]), encoding="utf-8")

    leftovers = _kill_mid_write(chunks_file, out_dir)

    assert any(path.stat().st_size > 0 for path in leftovers)
    assert {name: path.read_bytes() for name, path in previous.paths.items()} == before
    assert len(parse_sdk_file(previous.paths["sdk"], has_context=True)) == previous.counts["sdk_lines"]
    corpus = json.loads(previous.paths[MODE_B_FILE].read_text(encoding="utf-8"))
    assert corpus["metadata"]["generated"] == GENERATED
    assert len(corpus["chunks"]) == len(previous_chunks)

    # The next export goes through despite the leftovers, and redirects from the intact previous export.
    after = export(previous_chunks, out_dir, generated="2026-04-04T00:00:00Z")
    assert after.redirect_stats is not None and after.redirect_stats.unchanged == len(previous_chunks)
