"""The export step's library work alone: `write_corpus_parts` over a finished build's validated chunks.

    python benchmarks/bench_export.py OUTPUT_DIR [--repeat N] [--write-to DIR] [--kept]

OUTPUT_DIR is a build's output folder (its `stages/` and its export files, e.g. what
`bench_timeline.py` leaves in WORK/LABEL/out). Every corpus is exported again with no previous
export, into a temp folder (or DIR), with the `generated` timestamp of the build's own files: every
PDF's piece rendered (as when none is kept), or with `--kept` the pieces the build kept copied (as
`android_export` does). The CPU and wall seconds of each repeat are printed, and each file is
compared byte for byte with the build's. Run it from the checkout to measure (alternate two
checkouts on a shared machine: its load moves the numbers more than small changes do). The checkout's
package is imported, whatever is installed.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this checkout's package, not an installed one

from pocket_assets.export.kept_pieces import stored_pieces  # noqa: E402
from pocket_assets.export.validated_files import read_validated, validated_chunks_as_read  # noqa: E402
from pocket_assets.export.writer import KEY_COLUMNS, CorpusParts, export_paths, write_corpus_parts  # noqa: E402
from pocket_assets.stages.registry import VALIDATED_CHUNKS  # noqa: E402
from pocket_assets.stages.store import PartitionStore  # noqa: E402

SCHEMA_DIR = REPO_ROOT / "expectations"
NOTES = {"stale": [], "left_out": []}  # what the corpus JSON says of a build where every PDF passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output_dir", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write-to", type=Path)
    parser.add_argument("--kept", action="store_true", help="copy the pieces the build kept instead of rendering them")
    arguments = parser.parse_args()
    built = arguments.output_dir
    store = PartitionStore(built / "stages")
    folder = store.root / VALIDATED_CHUNKS.name
    keys = sorted(path.relative_to(folder).as_posix().removesuffix(".parquet") for path in folder.rglob("*.parquet"))
    files = {key: read_validated(store, key, KEY_COLUMNS) for key in keys}
    corpora = sorted({key.split("/", 1)[0] for key in keys})
    generated = {
        corpus: json.loads(export_paths(corpus, built)["redirects"].read_text(encoding="utf-8"))["metadata"]["generated"]
        for corpus in corpora
    }
    load = validated_chunks_as_read(store, files)
    with tempfile.TemporaryDirectory() as temp:
        out = arguments.write_to or Path(temp)
        seconds, walls = [], []
        for _ in range(arguments.repeat):
            for corpus in corpora:
                for path in export_paths(corpus, out).values():
                    path.unlink(missing_ok=True)  # a first export each time: no redirects from the last repeat
            started, wall = time.process_time(), time.perf_counter()
            for corpus in corpora:
                shipped = {key: file for key, file in files.items() if key.startswith(f"{corpus}/")}
                parts = CorpusParts(
                    keys={key: file.columns for key, file in shipped.items()},
                    load=load,
                    piece_cache=stored_pieces(store, SCHEMA_DIR, shipped) if arguments.kept else None,
                )
                write_corpus_parts(corpus, parts, out, generated[corpus], SCHEMA_DIR, notes=NOTES)
            seconds.append(time.process_time() - started)
            walls.append(time.perf_counter() - wall)
        differ = [
            path.name
            for corpus in corpora
            for path in export_paths(corpus, out).values()
            if not filecmp.cmp(path, built / path.name, shallow=False)
        ]
    chunks = sum(len(file.columns["id"]) for file in files.values())
    print(f"{len(keys)} PDFs, {chunks} chunks; CPU s per export: " + " ".join(f"{value:.2f}" for value in seconds))
    print("wall s: " + " ".join(f"{value:.2f}" for value in walls))
    print("files identical to the build's" if not differ else f"DIFFER: {', '.join(differ)}")


if __name__ == "__main__":
    main()
