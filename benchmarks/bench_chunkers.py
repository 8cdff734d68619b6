"""Compare our chunker with the usual peers on the shared corpus: speed, and the rules they break.

Every chunker gets the same text (each PDF's canonical text, pages joined by
`PAGE_SEPARATOR`), the same tokenizer (the vendored Gemma 3, loaded once,
counting text alone without special tokens) and the same 450/68 sizes. What a
chunker emits is then judged by one set of rules, re-counted with our
tokenizer whatever the chunker believed:

- over the cap: more than `max_tokens` (512) on the string the phone embeds,
  `text_to_embed(text, source, page)`; and, for reference, over 450 on the text alone;
- crossing pages: a chunk whose span touches two pages;
- broken tables: a Markdown pipe table (consecutive lines starting with `|`)
  that fits under the cap alone, yet no chunk holds it whole;
- offsets: whether the library's own offsets slice the text back exactly, and
  how many chunks had to be located by a forward search instead;
- coverage: non-whitespace characters that no chunk holds (a chunker that drops
  text would look faster than it is).

Timing: the median of `--runs` runs over the whole corpus, runs interleaved
across chunkers so machine noise spreads evenly. The timed region is building
the chunker (so memo caches start cold in every run) and chunking every
document into chunks with offsets, as far as the library provides them. PDF
extraction, tokenizer loading and all the checks above are outside it.

Run from the repository root, in the benchmark venv (see benchmarks/README.md):

    .venv-bench/bin/python benchmarks/bench_chunkers.py
"""

from __future__ import annotations

import argparse
import bisect
import dataclasses
import datetime
import gc
import json
import platform
import re
import statistics
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Callable, Sequence

from pocket_assets.core.chunking.embed_text import text_to_embed
from pocket_assets.core.document import canonical_text
from pocket_assets.core.extract import extract_pages
from pocket_assets.core.pdf import inspect_pdf
from pocket_assets.core.policy import PAGE_MODES, ChunkPolicy
from pocket_assets.core.raw_folder import discover_pdfs
from pocket_assets.core.records import PageRecord, PdfIdentity
from pocket_assets.core.tokenizer import TokenCounter, load_tokenizer

REPOSITORY = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPOSITORY.parent / "shared" / "corpus"
DEFAULT_OUTPUT = REPOSITORY / "benchmarks" / "results" / "bench_chunkers.json"

POLICY = ChunkPolicy()
CHILD_TOKENS = POLICY.child_tokens  # 450
CHILD_OVERLAP = POLICY.child_overlap  # 68
PARENT_TOKENS = POLICY.parent_tokens  # 1024
PARENT_OVERLAP = POLICY.parent_overlap  # 154
CAP = POLICY.max_tokens  # 512

TABLE_RUN = re.compile(r"(?m)^\|[^\n]*(?:\n\|[^\n]*)+")


@dataclass(frozen=True)
class Document:
    identity: PdfIdentity
    pages: tuple[PageRecord, ...]
    text: str


@dataclass(frozen=True)
class RawChunk:
    """A chunk as a library hands it back; `start`/`end` are its own offsets, or None."""

    text: str
    start: int | None
    end: int | None
    page: int | None = None  # our records carry their citation page; peers do not


@dataclass(frozen=True)
class Output:
    """One document's chunks: `embedded` are what the phone embeds, `parents` exist for hierarchical chunkers."""

    embedded: list[RawChunk]
    parents: list[RawChunk] = dataclasses.field(default_factory=list)


# A chunker is built fresh for every timed run (so no memo cache survives from
# the previous run) and returns a function that chunks one document.
ChunkerFactory = Callable[[TokenCounter], Callable[[Document], Output]]


@dataclass(frozen=True)
class Contender:
    name: str
    version: str
    settings: str
    factory: ChunkerFactory


# ---------------------------------------------------------------- contenders


def _package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "?"


def _text_alone_counter(counter: TokenCounter) -> Callable[[str], int]:
    """The token-length callable every peer is given: our tokenizer, no special tokens."""
    tokenizer = counter.tokenizer

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    return count


def ours(policy: ChunkPolicy, name: str, settings: str, keep_parents: bool = True) -> Contender | str:
    try:
        from pocket_assets.core.chunking.chunker import chunk_document
        from pocket_assets.core.chunking.slice_counts import PieceTokens
    except ImportError as error:
        return f"{name}: pocket_assets.core.chunking.chunker.chunk_document cannot be imported yet ({error})"

    def factory(counter: TokenCounter) -> Callable[[Document], Output]:
        piece_tokens = PieceTokens(counter)  # shared by the run's documents, cold in every run

        def run(document: Document) -> Output:
            chunked = chunk_document(document.identity, document.pages, policy, counter, piece_tokens)
            return Output(
                embedded=[RawChunk(c.text, c.char_start, c.char_end, c.page) for c in chunked.children],
                parents=[RawChunk(c.text, c.char_start, c.char_end, c.page) for c in chunked.parents]
                if keep_parents
                else [],
            )

        return run

    return Contender(name, _package_version("pocket_assets"), settings, factory)


def langchain() -> Contender | str:
    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter
    except ImportError as error:
        return f"langchain: not installed ({error})"

    def factory(counter: TokenCounter) -> Callable[[Document], Output]:
        # `from_huggingface_tokenizer` wants a `transformers` tokenizer and counts through its slower
        # Python `tokenize`; a length function on the same `tokenizers.Tokenizer` is LangChain's fastest
        # equivalent. `add_start_index` is LangChain's own offset recovery (a `str.find`), so it is timed.
        splitter = RecursiveCharacterTextSplitter(
            chunk_size=CHILD_TOKENS,
            chunk_overlap=CHILD_OVERLAP,
            length_function=_text_alone_counter(counter),
            add_start_index=True,
        )

        def run(document: Document) -> Output:
            pieces = splitter.create_documents([document.text])
            return Output(
                [
                    RawChunk(piece.page_content, start, start + len(piece.page_content) if start >= 0 else None)
                    for piece in pieces
                    for start in [piece.metadata.get("start_index", -1)]
                ]
            )

        return run

    settings = (
        f"RecursiveCharacterTextSplitter(chunk_size={CHILD_TOKENS}, chunk_overlap={CHILD_OVERLAP},"
        " length_function=our tokenizer, add_start_index=True)"
    )
    return Contender("langchain", _package_version("langchain-text-splitters"), settings, factory)


def chonkie() -> Contender | str:
    try:
        from chonkie import RecursiveChunker
    except ImportError as error:
        return f"chonkie: not installed ({error})"

    def factory(counter: TokenCounter) -> Callable[[Document], Output]:
        # Given the `tokenizers.Tokenizer` itself, Chonkie encodes without special tokens and can
        # fall back to token-level splits; it has no overlap option in this chunker.
        chunker = RecursiveChunker(tokenizer=counter.tokenizer, chunk_size=CHILD_TOKENS)

        def run(document: Document) -> Output:
            return Output([RawChunk(c.text, c.start_index, c.end_index) for c in chunker.chunk(document.text)])

        return run

    settings = f"RecursiveChunker(tokenizer=our tokenizers.Tokenizer, chunk_size={CHILD_TOKENS}); no overlap option"
    return Contender("chonkie", _package_version("chonkie"), settings, factory)


def llamaindex() -> Contender | str:
    try:
        from llama_index.core import Document as LlamaDocument
        from llama_index.core.node_parser import HierarchicalNodeParser, SentenceSplitter, get_leaf_nodes
        from llama_index.core.schema import MetadataMode
    except ImportError as error:
        return f"llamaindex: not installed ({error})"

    def factory(counter: TokenCounter) -> Callable[[Document], Output]:
        tokenizer = counter.tokenizer

        def encode(text: str) -> list[int]:
            return tokenizer.encode(text, add_special_tokens=False).ids

        # `from_defaults(chunk_sizes=...)` would give both levels the same 20-token overlap and the
        # global tiktoken tokenizer; the parser map gives each level our tokenizer and our overlaps.
        levels = {
            "parents": SentenceSplitter(chunk_size=PARENT_TOKENS, chunk_overlap=PARENT_OVERLAP, tokenizer=encode),
            "children": SentenceSplitter(chunk_size=CHILD_TOKENS, chunk_overlap=CHILD_OVERLAP, tokenizer=encode),
        }
        parser = HierarchicalNodeParser.from_defaults(node_parser_ids=list(levels), node_parser_map=levels)

        def run(document: Document) -> Output:
            nodes = parser.get_nodes_from_documents([LlamaDocument(text=document.text)])
            leaves = get_leaf_nodes(nodes)
            leaf_ids = {leaf.node_id for leaf in leaves}
            by_id = {node.node_id: node for node in nodes}

            def raw(node) -> RawChunk:  # noqa: ANN001 - a LlamaIndex TextNode
                text = node.get_content(metadata_mode=MetadataMode.NONE)
                start = node.start_char_idx
                parent = node.parent_node
                # A child's offsets are found (by `str.find`) in its parent's text, not the document's.
                if start is not None and parent is not None and parent.node_id in by_id:
                    parent_start = by_id[parent.node_id].start_char_idx
                    start = None if parent_start is None else parent_start + start
                return RawChunk(text, start, None if start is None else start + len(text))

            parents = [node for node in nodes if node.node_id not in leaf_ids]
            return Output([raw(leaf) for leaf in leaves], [raw(node) for node in parents])

        return run

    settings = (
        "HierarchicalNodeParser.from_defaults(node_parser_map="
        f"{{SentenceSplitter({PARENT_TOKENS}, {PARENT_OVERLAP}),"
        f" SentenceSplitter({CHILD_TOKENS}, {CHILD_OVERLAP})}}, tokenizer=our encode)"
    )
    return Contender("llamaindex", _package_version("llama-index-core"), settings, factory)


def semchunk() -> Contender | str:
    try:
        import semchunk as semchunk_module
    except ImportError as error:
        return f"semchunk: not installed ({error})"

    def factory(counter: TokenCounter) -> Callable[[Document], Output]:
        # A counter callable (so no special token is counted) plus `max_token_chars`, which is
        # what semchunk would derive itself from a tokenizer's vocabulary to speed up long inputs.
        longest_token = max(len(token) for token in counter.tokenizer.get_vocab())
        chunker = semchunk_module.chunkerify(_text_alone_counter(counter), CHILD_TOKENS, max_token_chars=longest_token)

        def run(document: Document) -> Output:
            texts, offsets = chunker(document.text, offsets=True, overlap=CHILD_OVERLAP)
            return Output([RawChunk(text, start, end) for text, (start, end) in zip(texts, offsets)])

        return run

    settings = (
        f"chunkerify(our token counter, {CHILD_TOKENS}, max_token_chars=longest vocab entry)"
        f"(text, offsets=True, overlap={CHILD_OVERLAP})"
    )
    return Contender("semchunk", _package_version("semchunk"), settings, factory)


def contenders() -> tuple[list[Contender], list[str]]:
    other_mode = next(mode for mode in PAGE_MODES if mode != POLICY.page_mode)
    candidates = [
        ours(POLICY, "ours", f"chunk_document(identity, pages, ChunkPolicy(), counter); {POLICY.page_mode}"),
        ours(
            dataclasses.replace(POLICY, parent_tokens=10**9, parent_overlap=0),
            "ours-children",
            "parent_tokens=1e9: one parent per segment (page or document), about children alone as flat peers",
            keep_parents=False,
        ),
        ours(dataclasses.replace(POLICY, page_mode=other_mode), f"ours-{other_mode}", f"page_mode={other_mode}"),
        langchain(),
        chonkie(),
        llamaindex(),
        semchunk(),
    ]
    found = [candidate for candidate in candidates if isinstance(candidate, Contender)]
    skipped = [candidate for candidate in candidates if isinstance(candidate, str)]
    return found, skipped


# ---------------------------------------------------------------- corpus


def load_corpus(corpus_dir: Path) -> list[Document]:
    documents = []
    for key in discover_pdfs(corpus_dir):
        path = corpus_dir / key
        pages = extract_pages(path)
        documents.append(Document(inspect_pdf(path, key), pages, canonical_text(pages)))
    return documents


# ---------------------------------------------------------------- judging


@dataclass(frozen=True)
class Located:
    start: int
    end: int
    page: int  # the page cited in the embedded string


@dataclass
class OffsetTally:
    exact: int = 0  # the library's offsets slice the text back
    searched: int = 0  # found by a forward search from the previous chunk's start
    lost: int = 0  # found nowhere (the library changed the text)


def locate(document: Document, chunks: Sequence[RawChunk], tally: OffsetTally) -> list[Located | None]:
    page_starts = [page.char_start for page in document.pages]
    located: list[Located | None] = []
    previous_start = 0
    for chunk in chunks:
        start = chunk.start
        if start is not None and chunk.end is not None and document.text[start : chunk.end] == chunk.text:
            tally.exact += 1
        else:
            start = document.text.find(chunk.text, previous_start)
            if start < 0:
                start = document.text.find(chunk.text)
            if start < 0:
                tally.lost += 1
                located.append(None)
                continue
            tally.searched += 1
        end = start + len(chunk.text)
        first_page = document.pages[max(0, bisect.bisect_right(page_starts, start) - 1)].page
        located.append(Located(start, end, chunk.page if chunk.page is not None else first_page))
        previous_start = start
    return located


def pages_touched(document: Document, start: int, end: int) -> int:
    return sum(1 for page in document.pages if page.char_start < end and start < page.char_end and page.text)


def table_spans(document: Document, counter: TokenCounter) -> tuple[list[tuple[int, int]], int]:
    """Pipe tables that fit under the cap alone (these must never be split), and how many do not."""
    page_starts = [page.char_start for page in document.pages]
    fitting, oversized = [], 0
    for match in TABLE_RUN.finditer(document.text):
        page = document.pages[bisect.bisect_right(page_starts, match.start()) - 1].page
        if counter.count(text_to_embed(match.group(), document.identity.source, page)) <= CAP:
            fitting.append(match.span())
        else:
            oversized += 1
    return fitting, oversized


@dataclass
class Verdict:
    chunks: int = 0
    parents: int = 0
    parents_over_target: int = 0
    over_cap_embedded: int = 0
    over_450_text: int = 0
    max_tokens_text: int = 0
    max_tokens_embedded: int = 0
    crossing_pages: int = 0
    tables_fitting: int = 0
    tables_oversized: int = 0
    broken_tables: int = 0
    uncovered_chars: int = 0
    offsets: OffsetTally = dataclasses.field(default_factory=OffsetTally)


def judge(documents: Sequence[Document], outputs: Sequence[Output], counter: TokenCounter) -> Verdict:
    verdict = Verdict()
    for document, output in zip(documents, outputs):
        chunks = output.embedded
        verdict.chunks += len(chunks)
        verdict.parents += len(output.parents)
        if output.parents:
            parent_counts = counter.count_batch([parent.text for parent in output.parents])
            verdict.parents_over_target += sum(count > PARENT_TOKENS for count in parent_counts)
        if not chunks:
            continue
        located = locate(document, chunks, verdict.offsets)
        text_counts = counter.count_batch([chunk.text for chunk in chunks])
        embedded_counts = counter.count_batch(
            [
                text_to_embed(chunk.text, document.identity.source, place.page if place else 1)
                for chunk, place in zip(chunks, located)
            ]
        )
        verdict.over_450_text += sum(count > CHILD_TOKENS for count in text_counts)
        verdict.over_cap_embedded += sum(count > CAP for count in embedded_counts)
        verdict.max_tokens_text = max(verdict.max_tokens_text, *text_counts)
        verdict.max_tokens_embedded = max(verdict.max_tokens_embedded, *embedded_counts)

        spans = [(place.start, place.end) for place in located if place is not None]
        verdict.crossing_pages += sum(pages_touched(document, start, end) > 1 for start, end in spans)

        tables, oversized = table_spans(document, counter)
        verdict.tables_fitting += len(tables)
        verdict.tables_oversized += oversized
        verdict.broken_tables += sum(
            not any(start <= table_start and table_end <= end for start, end in spans)
            for table_start, table_end in tables
        )

        covered = bytearray(len(document.text))
        for start, end in spans:
            covered[start:end] = b"\x01" * (end - start)
        verdict.uncovered_chars += sum(
            1 for index, char in enumerate(document.text) if not covered[index] and not char.isspace()
        )
    return verdict


# ---------------------------------------------------------------- running


def time_runs(
    contenders_found: Sequence[Contender], documents: Sequence[Document], counter: TokenCounter, runs: int
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, list[Output]], dict[str, str]]:
    """Round-robin runs: run 1 of every chunker, then run 2, ... so noise hits all of them alike.

    Wall seconds give pages per second; process CPU seconds (all threads, so the tokenizer's own
    parallel batch encoding counts) are steadier when other work shares the cores.
    """
    seconds: dict[str, list[float]] = {contender.name: [] for contender in contenders_found}
    cpu_seconds: dict[str, list[float]] = {contender.name: [] for contender in contenders_found}
    outputs: dict[str, list[Output]] = {}
    failures: dict[str, str] = {}
    for run_index in range(runs):
        for contender in contenders_found:
            if contender.name in failures:
                continue
            gc.collect()
            began, cpu_began = time.perf_counter(), time.process_time()
            try:
                chunk_one = contender.factory(counter)
                results = [chunk_one(document) for document in documents]
            except Exception as error:  # a peer that crashes is reported, not fatal
                failures[contender.name] = f"{type(error).__name__}: {error}"
                print(f"  {contender.name}: FAILED ({failures[contender.name]})", file=sys.stderr)
                continue
            seconds[contender.name].append(time.perf_counter() - began)
            cpu_seconds[contender.name].append(time.process_time() - cpu_began)
            outputs[contender.name] = results
            wall = seconds[contender.name][-1]
            print(f"  run {run_index + 1}/{runs} {contender.name}: {wall:.2f} s", file=sys.stderr)
    return seconds, cpu_seconds, outputs, failures


def markdown_table(rows: list[dict[str, object]], columns: list[tuple[str, str]]) -> str:
    lines = ["| " + " | ".join(title for _, title in columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(str(row[key]) for key, _ in columns) + " |")
    return "\n".join(lines)


COLUMNS = [
    ("chunker", "chunker"),
    ("pages_per_second", "pages/s"),
    ("median_seconds", "median s"),
    ("median_cpu_seconds", "cpu s"),
    ("chunks", "chunks"),
    ("over_cap_embedded", f"over cap ({CAP}, embedded)"),
    ("over_450_text", f"over {CHILD_TOKENS} (text)"),
    ("max_tokens_embedded", "max embedded"),
    ("crossing_pages", "cross pages"),
    ("broken_tables", "broken tables"),
    ("offsets", "offsets exact/searched/lost"),
    ("uncovered_chars", "uncovered chars"),
    ("parents", "parents (over 1024)"),
]


def main(argv: Sequence[str] | None = None) -> int:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    arguments.add_argument("--runs", type=int, default=3)
    arguments.add_argument("--only", nargs="*", help="chunker names to run (default: all)")
    arguments.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    options = arguments.parse_args(argv)

    started = time.perf_counter()
    counter = load_tokenizer()
    documents = load_corpus(options.corpus)
    page_total = sum(len(document.pages) for document in documents)
    print(
        f"corpus {options.corpus}: {len(documents)} PDFs, {page_total} pages, "
        f"{sum(len(d.text) for d in documents):,} characters (extracted and tokenizer loaded in "
        f"{time.perf_counter() - started:.1f} s, outside the timings)",
        file=sys.stderr,
    )

    found, skipped = contenders()
    if options.only:
        found = [contender for contender in found if contender.name in options.only]
    for reason in skipped:
        print(f"SKIPPED {reason}", file=sys.stderr)

    seconds, cpu_seconds, outputs, failures = time_runs(found, documents, counter, options.runs)

    rows: list[dict[str, object]] = []
    for contender in found:
        if contender.name in failures:
            continue
        verdict = judge(documents, outputs[contender.name], counter)
        median = statistics.median(seconds[contender.name])
        rows.append(
            {
                "chunker": contender.name,
                "version": contender.version,
                "settings": contender.settings,
                "pages_per_second": round(page_total / median, 1),
                "median_seconds": round(median, 3),
                "run_seconds": [round(value, 3) for value in seconds[contender.name]],
                "median_cpu_seconds": round(statistics.median(cpu_seconds[contender.name]), 3),
                "run_cpu_seconds": [round(value, 3) for value in cpu_seconds[contender.name]],
                **{key: value for key, value in dataclasses.asdict(verdict).items() if key != "offsets"},
                "offsets": f"{verdict.offsets.exact}/{verdict.offsets.searched}/{verdict.offsets.lost}",
                "offsets_detail": dataclasses.asdict(verdict.offsets),
            }
        )

    table_rows = [
        {**row, "parents": f"{row['parents']} ({row['parents_over_target']})" if row["parents"] else "-"}
        for row in rows
    ]
    print(markdown_table(table_rows, COLUMNS))
    tables_seen = rows[0]["tables_fitting"] if rows else 0
    print(
        f"\npipe tables in the extracted text: {tables_seen} that fit under the cap"
        f" + {rows[0]['tables_oversized'] if rows else 0} larger than it"
    )
    for reason in skipped:
        print(f"skipped: {reason}")
    for name, reason in failures.items():
        print(f"failed: {name}: {reason}")

    report = {
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "corpus": {
            "path": str(options.corpus),
            "pdfs": [document.identity.partition_key for document in documents],
            "pages": page_total,
            "characters": sum(len(document.text) for document in documents),
        },
        "tokenizer": counter.name,
        "sizes": {
            "child": CHILD_TOKENS,
            "child_overlap": CHILD_OVERLAP,
            "parent": PARENT_TOKENS,
            "parent_overlap": PARENT_OVERLAP,
            "cap": CAP,
        },
        "runs": options.runs,
        "results": rows,
        "skipped": skipped,
        "failed": failures,
    }
    options.output.parent.mkdir(parents=True, exist_ok=True)
    options.output.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {options.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
