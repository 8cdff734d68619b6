"""How long the gates take per 10,000 chunks: Great Expectations, JSON Schema and coverage apart.

Synthetic but valid partitions (every gate passes), built in memory: pages of
paragraphs, one parent per page, one child per paragraph, one table summary
every tenth page. Prints wall-clock and CPU seconds (best of --repeat) and CPU seconds per
10,000 chunks. GE's import and context set-up are timed once, apart.

    .venv/bin/python benchmarks/bench_gates.py            # 10k and 100k chunks
    .venv/bin/python benchmarks/bench_gates.py --sizes 10000 --repeat 5
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Callable

from pocket_assets.core import ids
from pocket_assets.core.document import PageContent, assemble_pages
from pocket_assets.core.policy import ChunkPolicy
from pocket_assets.core.quality.coverage import check_coverage
from pocket_assets.core.quality.schema_gate import check_schema
from pocket_assets.core.quality.suites import Gates, check_expectations, load_gates, validate_corpus_ids
from pocket_assets.core.records import ChunkRecord, ContentFeatures, PageRecord

EXPECTATIONS_DIR = Path(__file__).resolve().parents[1] / "expectations"
KEY = "intl/synthetic.pdf"
SOURCE = "synthetic.pdf"
CHILDREN_PER_PAGE = 8
PARAGRAPH = (
    "The arbiter shall ensure that the Laws of Chess are observed and that the games are played "
    "in a fair manner, with particular attention to the clocks and the recording of moves. "
) * 3
POLICY = ChunkPolicy()


def synthetic_partition(page_count: int) -> tuple[tuple[PageRecord, ...], list[ChunkRecord]]:
    page_text = "\n\n".join(f"{index}. {PARAGRAPH}" for index in range(CHILDREN_PER_PAGE))
    pages = assemble_pages(PageContent(page=number, text=page_text) for number in range(1, page_count + 1))
    document = ids.document_uuid(KEY)

    def chunk(chunk_id: str, text: str, chunk_type: str, page: int, start: int, parent: str | None) -> ChunkRecord:
        block = len(chunks)  # unique within the partition, as the chunker's canonical ids are
        embedded = len(text) // 5 if chunk_type != "parent" else 0  # what the phone embeds is counted for the rest
        return ChunkRecord(
            id=chunk_id, text=text, source=SOURCE, corpus="intl", chunk_type=chunk_type, page=page,
            pages=(page,), tokens=len(text) // 5, section=None, section_path=(), section_id=None,
            article_num=None, parent_id=parent, table_type=None, char_start=start, char_end=start + len(text),
            line_from=1, line_to=1, chunk_uid=ids.chunk_uuid(document, chunk_id), document_id=document,
            canonical_id=ids.canonical_id(document, "00000000", None, page, block), hash="", anchor="",
            chunk_index=0, total_chunks=0, has_overlap_previous=False, embedded_tokens=embedded,
            has_overlap_next=False, content_type="text", content_features=ContentFeatures(),
            chunker_version=POLICY.chunker_version, policy_hash=POLICY.policy_hash,
        )  # fmt: skip

    chunks: list[ChunkRecord] = []
    for page in pages:
        parent = ids.parent_id(SOURCE, page.page, 1)
        chunks.append(chunk(parent, page.text, "parent", page.page, page.char_start, None))
        offset = page.char_start
        for index, paragraph in enumerate(page.text.split("\n\n")):
            chunks.append(chunk(ids.child_id(parent, index), paragraph, "child", page.page, offset, parent))
            offset += len(paragraph) + 2
        if page.page % 10 == 0:
            summary_id = ids.table_summary_id(SOURCE, page.page, 1)
            chunks.append(chunk(summary_id, PARAGRAPH[:200], "table_summary", page.page, 0, parent))
    return pages, chunks


def best_of(repeat: int, work: Callable[[], object]) -> tuple[float, float]:
    """Best wall and best CPU seconds: CPU time is the steadier figure on a shared machine."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        outcome = work()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        assert all(result.passed for result in outcome), outcome  # type: ignore[attr-defined]
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="approximate chunk counts")
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()

    started = time.perf_counter()
    gates: Gates = load_gates(EXPECTATIONS_DIR)
    loaded = time.perf_counter() - started
    print(f"load_gates (GE import + context + suites + schema): {loaded:.2f} s wall, once per process")

    print(f"{'chunks':>8} {'gate':<32} {'wall s':>8} {'cpu s':>8} {'cpu s per 10k':>14}")
    for size in arguments.sizes:
        per_page = CHILDREN_PER_PAGE + 1.1
        pages, chunks = synthetic_partition(max(1, round(size / per_page)))
        gates_to_time: dict[str, Callable[[], object]] = {
            "great_expectations (12 exp.)": lambda: check_expectations(gates, chunks, POLICY),
            "json_schema (Draft7, to_dict)": lambda: check_schema(gates.chunk_schema, chunks),
            "coverage (pages, offsets, text)": lambda: check_coverage(KEY, chunks, pages, POLICY),
            "corpus ids (GE, 1 exp.)": lambda: validate_corpus_ids(gates, chunks).results,
        }
        for name, work in gates_to_time.items():
            wall, cpu = best_of(arguments.repeat, work)
            print(f"{len(chunks):>8} {name:<32} {wall:>8.3f} {cpu:>8.3f} {cpu * 10_000 / len(chunks):>14.3f}")


if __name__ == "__main__":
    main()
