"""Exact token counts of slices of a document, read off the one page encoding.

Counting every parent, child and embedded string again with the tokenizer cost
the chunker three more passes over the corpus. They are not needed: some
tokenizers never merge across certain character boundaries, so a string's
encoding is the concatenation of the encodings of the pieces between those
boundaries. For the vendored Gemma 3 tokenizer (a BPE over the whole text, no
effective pre-tokenizer, spaces normalized to "▁") the boundaries are:

- before a space that follows anything but a space, "▁" or ">": no vocabulary
  token holds "▁" after another character except ">▁</", so no merge crosses it;
- between a newline and another character: newline runs are added tokens, split
  off before the BPE sees the text, and no vocabulary token mixes newlines with
  anything else; no added token holds a space either.

`splits_cleanly` checks those facts on the loaded tokenizer (any other tokenizer
is counted the slow, plain way). The same fact makes the page encoding itself
cheap: a page's tokens are its pieces' tokens end to end, and a document has
~5x fewer distinct pieces than pieces (`PieceTokens`). Then the count of a
slice is the page tokens strictly between its first and last boundary plus the
exact encoding of the two short edge pieces, memoized (for a whole run when the
documents share one `PieceTokens`). An embedded string (folded whitespace,
citation, prompt) is not a slice of the text: it is cut into the same pieces and
their memoized counts are summed. The chunker tests check both against full
re-encoding on generated text and on the sample PDFs.
"""

from __future__ import annotations

import array
import bisect
import functools
import itertools
import json
import operator
import re
import weakref
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Sequence, TypeVar

import numpy

from pocket_assets.core.records import PageRecord
from pocket_assets.core.tokenizer import TokenCounter

_SPACE_MARK = "\u2581"
# Pieces a `PieceTokens` keeps: a run's common words stay counted, memory does not grow with the corpus.
DEFAULT_PIECE_CAPACITY = 100_000
# A piece ends before a space that follows anything but " ", "▁" or ">", and at newline/non-newline transitions.
PIECE = re.compile(r"\n+|[^\n][^ \n]*(?:(?<=[ \u2581>]) [^ \n]*)*")
# The first such boundary at or after a position (the boundary is before the matched character).
_BOUNDARY = re.compile(r"(?<=[^ \u2581>\n]) |(?<=\n)[^\n]|(?<=[^\n])\n")
_EXPECTED_NORMALIZER = {"type": "Replace", "pattern": {"String": " "}, "content": _SPACE_MARK}
# Splitting on " " after the normalizer turned every space into "▁" never splits anything.
_EXPECTED_PRE_TOKENIZERS = (
    None,
    {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": False},
)
# Over tokens joined by NUL: a newline next to another character, and "▁" after a character other than "▁" or ">".
_MIXED_NEWLINES = re.compile(r"[^\x00\n]\n|\n[^\x00\n]")
_MARK_AFTER_OTHER = re.compile(r"[^\x00\u2581>]\u2581")

Known = TypeVar("Known")
Item = TypeVar("Item")


def _per_tokenizer(compute: Callable[[TokenCounter], Known]) -> Callable[[TokenCounter], Known]:
    """`compute(counter)` once per tokenizer, remembered while the tokenizer lives and no longer.

    Not `functools.lru_cache`: its keys would hold every tokenizer ever asked about (a whole vocabulary
    each) for the life of the process.
    """
    known: weakref.WeakKeyDictionary[TokenCounter, Known] = weakref.WeakKeyDictionary()

    @functools.wraps(compute)
    def remembered(counter: TokenCounter) -> Known:
        if counter not in known:
            known[counter] = compute(counter)
        return known[counter]

    return remembered


@_per_tokenizer
def splits_cleanly(counter: TokenCounter) -> bool:
    """Whether `counter`'s encodings split at the piece boundaries above (checked once per tokenizer)."""
    tokenizer = counter.tokenizer
    if type(tokenizer.model).__name__ != "BPE":
        return False
    normalizer = tokenizer.normalizer
    pre_tokenizer = tokenizer.pre_tokenizer
    if normalizer is None or json.loads(normalizer.__getstate__()) != _EXPECTED_NORMALIZER:
        return False
    if (json.loads(pre_tokenizer.__getstate__()) if pre_tokenizer else None) not in _EXPECTED_PRE_TOKENIZERS:
        return False
    added = [token.content for token in tokenizer.get_added_tokens_decoder().values()]
    if "\n" not in added or any(" " in token or _MIXED_NEWLINES.search(token) for token in added):
        return False
    if counter.vendored:  # its vocabulary is scanned by the tests (test_chunker), not in every worker
        return True
    return vocabulary_splits_cleanly(counter)


def vocabulary_splits_cleanly(counter: TokenCounter) -> bool:
    """No vocabulary token mixes newlines with other characters or holds "▁" after a character other
    than "▁" or ">": a scan of the whole vocabulary, most of it spent reading the vocabulary out."""
    tokens = counter.tokenizer.get_vocab(with_added_tokens=False)
    vocabulary = "\x00".join(tokens)
    if vocabulary.count("\x00") != len(tokens) - 1:
        return False
    return not (_MIXED_NEWLINES.search(vocabulary) or _MARK_AFTER_OTHER.search(vocabulary))


# Token offsets are held as C ints, not Python ones: a long manual has millions of tokens, and two arrays of
# C ints are a fraction of two lists of int objects (a worker's peak memory is its largest PDF's).
_OFFSET_TYPE = "i"
# The same C int, for a page's token edges summed in numpy rather than as a Python int per token.
_EDGE_TYPE = numpy.intc
# Pages whose pieces (or encodings) are made at once: bounds what a long document holds while its
# offsets are assembled, while keeping tokenizer calls few.
_CHARS_PER_GROUP = 1 << 18
# Strings counted per call by `count_batch` and `count_slices` (a long document's children are thousands).
_TEXTS_PER_BATCH = 256


@dataclass(frozen=True)
class TokenOffsets:
    """Each token's start and end, in document offsets, in token order (sorted)."""

    starts: array.array
    ends: array.array


def page_token_offsets(pages: Sequence[PageRecord], counter: TokenCounter) -> TokenOffsets:
    """Every page's tokens through the tokenizer's whole pipeline, in document offsets."""
    starts = array.array(_OFFSET_TYPE)
    ends = array.array(_OFFSET_TYPE)
    for group in _page_groups([page for page in pages if page.text]):
        for page, encoding in zip(group, counter.encode_batch([page.text for page in group])):
            if encoding.offsets:
                page_starts, page_ends = zip(*encoding.offsets)
                starts.extend(map(page.char_start.__add__, page_starts))
                ends.extend(map(page.char_start.__add__, page_ends))
    return TokenOffsets(starts, ends)


def _page_groups(pages: Sequence[PageRecord]) -> Iterator[Sequence[PageRecord]]:
    """Consecutive pages, about `_CHARS_PER_GROUP` characters a group (a longer page alone)."""
    first, size = 0, 0
    for index, page in enumerate(pages):
        if size and size + len(page.text) > _CHARS_PER_GROUP:
            yield pages[first:index]
            first, size = index, 0
        size += len(page.text)
    if first < len(pages):
        yield pages[first:]


def _batches(items: Iterable[Item], size: int) -> Iterator[list[Item]]:
    """`items` in lists of `size` (the last one shorter), taken from the iterable as they are needed."""
    iterator = iter(items)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


class PieceTokens:
    """Token lengths of strings without a piece boundary inside, read from the BPE model itself.

    The pipeline spends most of its time per call, not per character; a document
    has ~5x fewer distinct pieces than pieces, and the model tokenizes one in a
    few microseconds. Going around the pipeline is exact when no added token can
    match (the string holds none of their first characters) and the tokens spell
    the normalized string back (no byte fallback); anything else goes through the
    pipeline. `lengths` is None for a string whose token offsets are not
    contiguous (byte fallback inside one character).

    Shared by a step's documents, it would hold every distinct piece of the run
    (~70,000 for 1,000 pages, ~170 bytes each, growing with the corpus): past
    `capacity` pieces it starts afresh, keeping only the strings of the `learn`
    call at hand (what its caller looks up next). Counts are exact either way.
    """

    def __init__(self, counter: TokenCounter, capacity: int = DEFAULT_PIECE_CAPACITY) -> None:
        self.counter = counter
        self.capacity = capacity
        self.tokenize = counter.tokenizer.model.tokenize
        self.needs_pipeline = _added_token_starts(counter)
        self._forget()

    def _forget(self) -> None:
        # New containers, not cleared ones: a caller holding the old ones still finds what it learned.
        self.lengths: dict[str, tuple[int, ...] | None] = {"": ()}
        self.counts: dict[str, int] = {"": 0}
        self.irregular: set[str] = set()  # strings whose `lengths` is None

    def learn(self, strings: Iterable[str]) -> None:
        """Count every string of `strings` not counted yet; afterwards `counts` and `lengths` hold all of them."""
        asked = set(strings)
        unknown_set = asked.difference(self.counts)
        if not unknown_set:
            return
        if len(self.counts) + len(unknown_set) > self.capacity:
            self._forget()
            unknown_set = asked.difference(self.counts)
        counts = self.counts
        unknown = sorted(unknown_set)  # sorted: the same calls in every process
        lengths, tokenize, needs_pipeline = self.lengths, self.tokenize, self.needs_pipeline.search
        through_pipeline = []
        for string in unknown:
            if needs_pipeline(string) is None:
                normalized = string.replace(" ", _SPACE_MARK)
                values = [token.value for token in tokenize(normalized)]
                if "".join(values) == normalized:
                    lengths[string] = tuple(map(len, values))
                    counts[string] = len(values)
                    continue
            through_pipeline.append(string)
        encodings = self.counter.encode_batch(through_pipeline) if through_pipeline else []
        for string, encoding in zip(through_pipeline, encodings):
            offsets = encoding.offsets
            edges = [0, *(end for _, end in offsets)]
            contiguous = [start for start, _ in offsets] == edges[:-1] and edges[-1] == len(string)
            lengths[string] = tuple(map(operator.sub, edges[1:], edges[:-1])) if contiguous else None
            counts[string] = len(offsets)
            if not contiguous:
                self.irregular.add(string)


@_per_tokenizer
def _added_token_starts(counter: TokenCounter) -> re.Pattern[str]:
    """Characters that begin some added token: a string holding none cannot match one."""
    firsts = {token.content[0] for token in counter.tokenizer.get_added_tokens_decoder().values() if token.content}
    return re.compile("[" + "".join(map(re.escape, sorted(firsts))) + "]") if firsts else re.compile(r"(?!)")


class PieceCounter:
    """Exact token counts of arbitrary strings, as sums of their memoized pieces (`PieceTokens`): a `TextCounter`.

    With a tokenizer that does not split cleanly, the tokenizer's own counts. Shared by a step's
    documents (table summaries' sentences, context headers), common words are tokenized once and a
    string costs no tokenizer pipeline call (~20 us each, thousands per document).
    """

    def __init__(self, pieces: PieceTokens) -> None:
        self.pieces = pieces
        self.counter = pieces.counter
        self.name = pieces.counter.name
        self.exact = splits_cleanly(pieces.counter)

    def count(self, text: str) -> int:
        return self.count_batch([text])[0]

    def count_batch(self, texts: Iterable[str]) -> list[int]:
        """Taken `_TEXTS_PER_BATCH` at a time: given a generator, a long document's thousands of
        embedded strings (and their pieces, or encodings) are never all held at once."""
        counts: list[int] = []
        for batch in _batches(texts, _TEXTS_PER_BATCH):
            counts.extend(self._count_batch(batch))
        return counts

    def _count_batch(self, texts: list[str]) -> list[int]:
        if not self.exact:
            return self.counter.count_batch(texts)
        pieces = [PIECE.findall(text) for text in texts]
        self.pieces.learn(itertools.chain.from_iterable(pieces))
        lookup = self.pieces.counts.__getitem__
        return [sum(map(lookup, text_pieces)) for text_pieces in pieces]


class SliceCounter:
    """Token counts of one document's slices and derived strings, exact, with few tokenizer calls.

    `tokens` are the pages' token offsets, for planning windows. With a tokenizer
    that splits cleanly they are assembled from the pages' pieces (the same
    offsets the pipeline gives, at a fraction of its cost); otherwise they come
    from the pipeline and every count is a plain re-encoding.
    """

    def __init__(self, text: str, pages: Sequence[PageRecord], pieces: PieceTokens) -> None:
        counter = pieces.counter
        self.text = text
        self.counter = counter
        self.name = counter.name
        self.strings = PieceCounter(pieces)
        self.exact = self.strings.exact
        self.gap_starts: list[int] = []
        self.gap_corrections: list[int] = []  # cumulative
        self.pieces = pieces
        self.tokens = self._tokens_from_pieces(pages) if self.exact else page_token_offsets(pages, counter)
        self.token_starts = self.tokens.starts  # every page's token starts, in document offsets, sorted
        if self.exact:
            self._index_page_gaps(pages)

    def count_slices(self, spans: Sequence[tuple[int, int]]) -> list[int]:
        """Exact counts of `text[start:end]`: edges encoded, the middle read off the page encoding."""
        text = self.text
        if not self.exact:
            return self.count_batch(text[start:end] for start, end in spans)
        plans: list[tuple[str, int, int, str]] = []
        for start, end in spans:
            inner_start = self._first_boundary(start, end)
            inner_end = self._last_boundary(inner_start, end) if inner_start is not None else None
            if inner_start is None or inner_end is None:
                plans.append((text[start:end], 0, 0, ""))
            else:
                plans.append((text[start:inner_start], inner_start, inner_end, text[inner_end:end]))
        self.pieces.learn([piece for head, _, _, tail in plans for piece in (head, tail)])
        counts = self.pieces.counts
        return [counts[head] + self._between(low, high) + counts[tail] for head, low, high, tail in plans]

    def count(self, text: str) -> int:
        return self.strings.count(text)

    def count_batch(self, texts: Iterable[str]) -> list[int]:
        """Exact counts of arbitrary strings (`PieceCounter`)."""
        return self.strings.count_batch(texts)

    def _first_boundary(self, start: int, end: int) -> int | None:
        """`start` itself when the whole text splits there, else the first boundary inside the slice."""
        if start == 0 or _is_boundary(self.text, start):
            return start
        found = _BOUNDARY.search(self.text, start + 1, end)
        return found.start() if found else None

    def _last_boundary(self, low: int, end: int) -> int | None:
        text = self.text
        for position in range(end, low, -1):
            if position == len(text) or _is_boundary(text, position):
                return position
        return None

    def _between(self, low: int, high: int) -> int:
        """Tokens of `text[low:high]`, both ends boundaries: page tokens, plus the page gaps' own tokens."""
        if high <= low:
            return 0
        starts = self.token_starts
        count = bisect.bisect_left(starts, high) - bisect.bisect_left(starts, low)
        first_gap = bisect.bisect_left(self.gap_starts, low)
        last_gap = bisect.bisect_left(self.gap_starts, high)
        if last_gap > first_gap:
            count += self.gap_corrections[last_gap] - self.gap_corrections[first_gap]
        return count

    def _tokens_from_pieces(self, pages: Sequence[PageRecord]) -> TokenOffsets:
        """Each page's token offsets as its pieces' token lengths laid end to end.

        A page holding a piece whose offsets are not contiguous is encoded whole instead.
        Pages are cut into pieces a group at a time (`_page_groups`): a long document's
        million pieces are not all held at once.
        """
        starts = array.array(_OFFSET_TYPE)
        ends = array.array(_OFFSET_TYPE)
        for group in _page_groups([page for page in pages if page.text]):
            filled = [(page, PIECE.findall(page.text)) for page in group]
            self.pieces.learn(itertools.chain.from_iterable(pieces for _, pieces in filled))
            lengths = self.pieces.lengths
            irregular = self.pieces.irregular
            for page, pieces in filled:
                if irregular and not irregular.isdisjoint(pieces):
                    offsets = page_token_offsets([page], self.counter)
                    starts.extend(offsets.starts)
                    ends.extend(offsets.ends)
                    continue
                token_lengths = itertools.chain.from_iterable(map(lengths.__getitem__, pieces))
                edges = numpy.fromiter(itertools.chain((page.char_start,), token_lengths), _EDGE_TYPE)
                edges.cumsum(out=edges)
                starts.frombytes(edges[:-1].tobytes())
                ends.frombytes(edges[1:].tobytes())
        return TokenOffsets(starts, ends)

    def _index_page_gaps(self, pages: Sequence[PageRecord]) -> None:
        """Each newline run holding a page separator: its tokens minus those the page encodings gave it.

        The separators are in no page encoding, and they join the newline runs at the page edges into one.
        """
        text = self.text
        runs: dict[int, int] = {}
        for page in pages[:-1]:
            run_start = page.char_end
            while run_start > 0 and text[run_start - 1] == "\n":
                run_start -= 1
            run_end = page.char_end
            while run_end < len(text) and text[run_end] == "\n":
                run_end += 1
            if run_end > run_start:
                runs[run_start] = run_end
        ordered = sorted(runs.items())
        self.pieces.learn([text[start:end] for start, end in ordered])
        starts = self.token_starts
        self.gap_corrections = [0]
        for start, end in ordered:
            in_pages = bisect.bisect_left(starts, end) - bisect.bisect_left(starts, start)
            self.gap_starts.append(start)
            self.gap_corrections.append(self.gap_corrections[-1] + self.pieces.counts[text[start:end]] - in_pages)


def _is_boundary(text: str, position: int) -> bool:
    if position <= 0 or position >= len(text):
        return True
    before, char = text[position - 1], text[position]
    return (char == " " and before not in " \u2581>") or ((before == "\n") != (char == "\n"))
