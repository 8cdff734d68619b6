"""CPU seconds of the per-chunk record work on a built corpus: rows to records and back, the schema gate, the export.

Reads the validated chunks of an output folder a build wrote (one Parquet file per PDF) and times,
best of --repeat, in this process: `chunk_from_dict` over every stored row, `to_dict` over every
chunk; the JSON Schema gate (`check_schema`,
PDF by PDF, as `validated_chunks` runs it); and `write_corpus_exports` for every corpus (the four
export files, each chunk validated against the chunk and HEPilot schemas) into a temporary folder.
Everything read is in memory before the clocks start.

    .venv/bin/python benchmarks/bench_build.py --copies 5       # or any build, then:
    .venv/bin/python benchmarks/bench_schema.py OUTPUT_DIR      # OUTPUT_DIR holds stages/validated_chunks/
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

import pyarrow.parquet as pq

from pocket_assets.core.quality.schema_gate import check_schema, load_chunk_schema
from pocket_assets.core.records import ChunkRecord, chunk_from_dict, to_dict
from pocket_assets.export.writer import write_corpus_exports

EXPECTATIONS_DIR = Path(__file__).resolve().parents[1] / "expectations"
GENERATED = "2026-01-01T00:00:00+00:00"


def validated_rows(output_dir: Path) -> list[list[dict[str, Any]]]:
    """Each PDF's stored validated chunks, in file order."""
    files = sorted((output_dir / "stages" / "validated_chunks").rglob("*.parquet"))
    if not files:
        raise SystemExit(f"{output_dir}: no stages/validated_chunks/**/*.parquet (build the corpus first)")
    return [pq.read_table(path).to_pylist() for path in files]


def best_cpu(repeat: int, work: Callable[[], object]) -> float:
    """Best CPU seconds of `repeat` runs: the steadier figure on a shared machine."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output_dir", type=Path, help="a build's output folder (holds stages/)")
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()

    rows = validated_rows(arguments.output_dir)
    per_pdf = [[chunk_from_dict(row) for row in pdf] for pdf in rows]
    chunks = [chunk for pdf in per_pdf for chunk in pdf]
    by_corpus: dict[str, list[ChunkRecord]] = defaultdict(list)
    for chunk in chunks:
        by_corpus[chunk.corpus].append(chunk)
    chunk_schema = load_chunk_schema(EXPECTATIONS_DIR)

    def gate() -> None:
        failed = [result for pdf in per_pdf for result in check_schema(chunk_schema, pdf) if not result.passed]
        assert not failed, failed[:3]

    def export() -> None:
        with tempfile.TemporaryDirectory(prefix="bench-schema-") as folder:
            for corpus, corpus_chunks in sorted(by_corpus.items()):
                write_corpus_exports(corpus, corpus_chunks, Path(folder), GENERATED, EXPECTATIONS_DIR)

    timed: dict[str, Callable[[], object]] = {
        "chunk_from_dict (every row once)": lambda: [chunk_from_dict(row) for pdf in rows for row in pdf],
        "to_dict (every chunk once)": lambda: [to_dict(chunk) for chunk in chunks],
        "schema gate (check_schema per PDF)": gate,
        "export (write_corpus_exports)": export,
    }
    print(f"{len(chunks)} chunks from {len(per_pdf)} PDFs, best of {arguments.repeat}")
    print(f"{'what':<36} {'cpu s':>7} {'µs per chunk':>13}")
    for name, work in timed.items():
        cpu = best_cpu(arguments.repeat, work)
        print(f"{name:<36} {cpu:>7.2f} {cpu * 1e6 / len(chunks):>13.1f}")


if __name__ == "__main__":
    main()
