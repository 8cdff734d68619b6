"""Token counting with the embedding model's own tokenizer, offline, without model weights."""

from __future__ import annotations

import functools
import gzip
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Protocol, Sequence

import blake3
from tokenizers import Encoding, Tokenizer

from pocket_assets.core.errors import TokenizerError

DEFAULT_TOKENIZER = "gemma3"
TOKENIZER_ENV = "POCKET_ASSETS_TOKENIZER"  # read by the Dagster layer and the CLI, never here
_VENDORED = {"gemma3": "gemma3-tokenizer.json.gz", "embeddinggemma": "gemma3-tokenizer.json.gz"}


class TextCounter(Protocol):
    """Exact token counts of strings: a `TokenCounter`, a step's `slice_counts.PieceCounter` or a document's
    `slice_counts.SliceCounter`
    (the same counts, from memoized pieces, with fewer tokenizer calls). `name` is the tokenizer's."""

    name: str

    def count(self, text: str) -> int: ...

    def count_batch(self, texts: Sequence[str]) -> list[int]: ...


@dataclass(frozen=True)
class TokenCounter:
    """A loaded tokenizer. Encodings come without special tokens: `tokens` counts text alone."""

    name: str
    tokenizer: Tokenizer
    # Loaded from a file shipped with the package: facts about its vocabulary that cost a scan of every
    # token (`slice_counts.splits_cleanly`, in each process that chunks) are checked by the tests instead.
    vendored: bool = False

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [len(encoding.ids) for encoding in self.encode_batch(texts)]

    def encode_batch(self, texts: Sequence[str]) -> list[Encoding]:
        """One batched call (ids and char offsets together): the fast path the chunker uses."""
        return self.tokenizer.encode_batch(list(texts), add_special_tokens=False)


@functools.lru_cache(maxsize=4)
def load_tokenizer(spec: str = DEFAULT_TOKENIZER) -> TokenCounter:
    """Load by name once per process: the parse is one of a process's largest fixed costs, and the tokenizer
    stays resident.

    `spec` is `gemma3` (vendored, the default), a `tokenizer.json[.gz]` file, a
    folder holding one (a Hugging Face snapshot or a sentence-transformers model
    folder), or a Hugging Face id already in the local cache. Nothing is downloaded.
    """
    if spec in _VENDORED:
        data = resources.files("pocket_assets.core.data").joinpath(_VENDORED[spec]).read_bytes()
        tokenizer = _from_json_bytes(gzip.decompress(data), spec)
    else:
        tokenizer = _parse(tokenizer_file(spec))
    return TokenCounter(spec, tokenizer, vendored=spec in _VENDORED)


def _from_json_bytes(raw: bytes, source: object) -> Tokenizer:
    """Parsed from bytes, not from a Python str: the str copy and its decode would raise the load's peak
    memory by the size of the JSON again; `Tokenizer.from_file` on the JSON costs the same. There is
    no other serialized form (a pickled Tokenizer is that JSON again): the vendored file is the JSON
    in the form that parses fastest (`compact_tokenizer_json`), gzipped."""
    try:
        return Tokenizer.from_buffer(raw)
    except Exception as error:  # tokenizers raises a bare Exception on malformed JSON
        raise TokenizerError(f"{source}: not a Hugging Face tokenizer.json ({error})") from None


def compact_tokenizer_json(raw: bytes) -> bytes:
    """The same tokenizer as the `tokenizer.json` `raw`, in the form `tokenizers` parses fastest: no
    whitespace, and BPE merges as `"left right"` strings (the format `tokenizers` wrote before 0.20 and
    still reads) instead of `["left", "right"]` pairs: less to parse (most of the parse is building the
    merges) and a smaller gzipped file.
    Both forms give the same tokenizer (`Tokenizer.to_str()` is equal). A merge of a token that holds
    a space cannot be written as one string, so such a model keeps its pairs. The vendored file is
    this form of the original (see the NOTICE beside it)."""
    document = json.loads(raw)
    model = document.get("model", {})
    merges = model.get("merges", [])
    pairs = [merge for merge in merges if not isinstance(merge, str)]
    if model.get("type") == "BPE" and pairs and not any(" " in part for pair in pairs for part in pair):
        model["merges"] = [merge if isinstance(merge, str) else " ".join(merge) for merge in merges]
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def tokenizer_identity(spec: str) -> str:
    """What chunks made with this tokenizer are versioned by: the vendored name, or the
    blake3 of the tokenizer file `spec` resolves to, so editing or swapping the file (not
    moving it) changes the version. The hash is remembered per path, size and modification time."""
    if spec in _VENDORED:
        return spec
    path = tokenizer_file(spec)
    stat = path.stat()
    return _file_identity(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _file_identity(path: str, size: int, mtime_ns: int) -> str:
    """Cached by size and mtime: the staleness sensor asks on every tick."""
    return "blake3:" + blake3.blake3(Path(path).read_bytes()).hexdigest()[:16]


def tokenizer_file(spec: str) -> Path:
    """The tokenizer.json[.gz] a non-vendored `spec` names (see `load_tokenizer`)."""
    path = Path(spec).expanduser()
    if path.exists():
        return _file_in(path)
    return _file_in(_cached_hub_file(spec))


def _file_in(path: Path) -> Path:
    if not path.is_dir():
        return path
    candidates = [path / "tokenizer.json", path / "tokenizer.json.gz", *sorted(path.glob("*/tokenizer.json"))]
    found = next((candidate for candidate in candidates if candidate.is_file()), None)
    if found is None:
        raise TokenizerError(f"{path}: no tokenizer.json in this folder (nor one level down)")
    return found


def _parse(path: Path) -> Tokenizer:
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return _from_json_bytes(raw, path)


def _cached_hub_file(model_id: str) -> Path:
    """A hub id resolved from the local Hugging Face cache only (HF_HOME), never the network."""
    from huggingface_hub import try_to_load_from_cache

    try:
        cached = try_to_load_from_cache(model_id, "tokenizer.json")
    except Exception as error:  # invalid repo id syntax and the like
        raise TokenizerError(f"tokenizer {model_id!r}: not a file, folder or valid model id ({error})") from None
    if not isinstance(cached, str):
        raise TokenizerError(
            f"tokenizer {model_id!r} is neither 'gemma3', a local path, nor a model in the local Hugging Face "
            "cache; nothing is downloaded at run time: give a path to its tokenizer.json or model folder"
        )
    return Path(cached)
