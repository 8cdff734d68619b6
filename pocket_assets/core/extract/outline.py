"""The author's own list of headings: the PDF's outline (bookmarks) and, in tagged PDFs, its heading tags.

Where a PDF holds an outline, it names the headings and their levels, whatever their typography; the
detection from fonts and numbering fills what it lacks. The outline is read once per PDF (`get_toc()`:
titles and pages, small beside the pages) and handed out page by page (`OutlineEntry` per page), so
whoever reads a page needs its page's entries only. Heading tags (`H1`..`H6` in the structure tree) are
read from the page itself, where MuPDF gathers the tagged text, and only in PDFs whose tree holds one.

An entry is matched to the page's paragraphs by its words, case, accents, punctuation and markup
aside: the outline may say `Vue d'ensemble de LaTeX{}` where the page says `Vue d'ensemble de LaTeX`,
`Introduction` where the page says `1 Introduction`, or only the start of a line (`base-package` over
`base-package The R Base Package`, a run-in heading): the heading is then that start.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pymupdf

from pocket_assets.core.chunking.embed_text import fold_accents
from pocket_assets.core.extract.numbering import KIND_RANKS
from pocket_assets.core.pdf import MUPDF_ERRORS

_TOKEN = re.compile(r"[^\W_]+")
_REFERENCE = re.compile(r"(\d+)\s+\d+\s+R")
_ROLE = re.compile(r"/([^\s/<>\[\]()]+)\s*/([^\s/<>\[\]()]+)")
HEADING_TAGS = {"H1": 1, "H2": 2, "H3": 3, "H4": 4, "H5": 5, "H6": 6, "H": 1}
TAG_SEARCH_LIMIT = 2000  # structure elements looked at for a heading tag before the tree is taken to hold none
MAX_PARTS = 3  # paragraphs one heading may span (a font change cuts a heading in two)
MAX_READ_CHARS = 500  # a paragraph's opening where an entry is looked for; longer paragraphs are no heading
_BEYOND = "\0"  # the token that stands for the rest of a longer paragraph
MAX_NUMBERING = 8  # tokens a heading's numbering may take: `Chapitre 2`, `1 2 3 4`, `Annexe A 2`
FUZZY_RATIO = 0.85  # how alike an entry and a paragraph must read when their words differ


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """A heading the author listed: its level (1 at the top) and its title."""

    level: int
    title: str


@dataclass(frozen=True, slots=True)
class Candidate:
    """A paragraph of the page as the matching sees it: its text; its tier (a higher one is tried only when
    the lower ones give nothing); whether a heading may be run into it (its first line sets its opening
    apart: a bold lead, or pieces far apart), so that an entry naming its start is that start."""

    text: str
    tier: int = 0
    run_in: bool = False


@dataclass(frozen=True, slots=True)
class OutlineMatch:
    """Where an entry stands among a page's paragraphs: from `first` to `last`; `cut` is the length of `last`'s
    text the heading holds when it is only that text's start, else None."""

    first: int
    last: int
    level: int
    cut: int | None = None


def outline_entries(document: pymupdf.Document) -> dict[int, tuple[OutlineEntry, ...]]:
    """Each page's outline entries (pages from 1), in outline order; none when the PDF has no outline or it is
    unreadable (an outline is a help, never a reason to fail)."""
    try:
        toc = document.get_toc(simple=True)
    except MUPDF_ERRORS:
        return {}
    entries: dict[int, list[OutlineEntry]] = {}
    for level, title, page in toc:
        if 1 <= page <= document.page_count and _tokens(title):
            entries.setdefault(page, []).append(OutlineEntry(max(level, 1), " ".join(title.split())))
    return {page: tuple(listed) for page, listed in entries.items()}


def has_heading_tags(document: pymupdf.Document) -> bool:
    """Whether the PDF's structure tree holds a heading tag among its first TAG_SEARCH_LIMIT elements (in
    document order, where the first headings stand), its role map applied."""
    try:
        catalog = document.pdf_catalog()
        kind, root = document.xref_get_key(catalog, "StructTreeRoot")
        if kind != "xref":
            return False
        root_xref = int(root.split()[0])
        roles = dict(_ROLE.findall(document.xref_get_key(root_xref, "RoleMap")[1]))
        pending = _references(document.xref_get_key(root_xref, "K")[1])[::-1]
        seen: set[int] = set()
        while pending and len(seen) < TAG_SEARCH_LIMIT:
            xref = pending.pop()
            if xref in seen:
                continue
            seen.add(xref)
            name = document.xref_get_key(xref, "S")[1].lstrip("/")
            if roles.get(name, name) in HEADING_TAGS:
                return True
            pending.extend(_references(document.xref_get_key(xref, "K")[1])[::-1])
    except (ValueError, *MUPDF_ERRORS):
        return False
    return False


def _references(value: str) -> list[int]:
    return [int(number) for number in _REFERENCE.findall(value)]


def tagged_headings(page: pymupdf.Page) -> tuple[OutlineEntry, ...]:
    """The page's text tagged as a heading (`H1`..`H6`; a bare `H` counts as a top one), in reading order."""
    try:
        data = page.get_text("dict", flags=pymupdf.TEXT_COLLECT_STRUCTURE | pymupdf.TEXT_MEDIABOX_CLIP)
    except MUPDF_ERRORS:
        return ()
    found: list[OutlineEntry] = []
    _collect_headings(data["blocks"], found)
    return tuple(found)


def _collect_headings(blocks: list[dict[str, Any]], found: list[OutlineEntry]) -> None:
    for block in blocks:
        if block.get("type") != 2:
            continue
        level = HEADING_TAGS.get(block.get("std") or "")
        if level is None:
            _collect_headings(block.get("blocks", []), found)
            continue
        title = " ".join(_text_of(block.get("blocks", [])).split())
        if _tokens(title):
            found.append(OutlineEntry(level, title))


def _text_of(blocks: list[dict[str, Any]]) -> str:
    parts = []
    for block in blocks:
        if block.get("type") == 2:
            parts.append(_text_of(block.get("blocks", [])))
        elif block.get("type", 0) == 0:
            parts.extend("".join(span["text"] for span in line["spans"]) for line in block["lines"])
    return " ".join(parts)


def _opening_tokens(text: str) -> list[str]:
    """The tokens of a paragraph's opening, which is all a heading can be: a longer paragraph ends in a token no
    title holds, so that it is never one, and most of a page's words are not read twice."""
    if len(text) <= MAX_READ_CHARS:
        return _tokens(text)
    return [*_tokens(text[:MAX_READ_CHARS]), _BEYOND]


def _tokens(text: str) -> list[str]:
    """The words and numbers of `text`, accents and case aside (`LaTeX{}` and `latex` are one word)."""
    return [(token if token.isascii() else fold_accents(token)).casefold() for token in _TOKEN.findall(text)]


_LABEL_WORDS = frozenset(KIND_RANKS)
_ORDINAL = re.compile(r"^\d+(?:er|re|e|bis|ter)?$")  # 12, 1er, 2e, 12bis
_AFTER_LABEL = re.compile(r"^(?:[ivxlc]+(?:er|re)?|[a-z])$")  # TITRE IV, TITRE Ier, Annexe A


def _numbering(tokens: list[str]) -> int:
    """How many leading tokens number the heading (`1 2`, `chapter 1`, `titre ier`, `annexe a`) rather than title
    it; at least one token is left as the title."""
    count = 0
    while count < len(tokens) - 1:
        token = tokens[count]
        after_label = count > 0 and tokens[count - 1] in _LABEL_WORDS
        if not (token in _LABEL_WORDS or _ORDINAL.match(token) or (after_label and _AFTER_LABEL.match(token))):
            break
        count += 1
    return count


def _title(tokens: list[str]) -> list[str]:
    return tokens[_numbering(tokens) :]


def match_outline(entries: Sequence[OutlineEntry], candidates: Sequence[Candidate]) -> dict[int, OutlineMatch]:
    """The paragraphs (`candidates`, in reading order) that are the page's entries, by the index of their first.

    Entries are placed in outline order, each after the one before it when it can be (a paragraph after the
    previous entry's heading is tried before any above it): a paragraph equal to the entry (numbering
    aside, a heading a font change cut in two rejoined), else one a heading is run into that starts with
    it, else one that reads nearly alike (`FUZZY_RATIO`). Paragraphs of a higher tier are tried only when
    those of lower tiers give nothing: a manual quotes a command in its examples (`See Also: attributes`)
    on the page its own heading opens. An entry matching nothing is left out.
    """
    tokens = [_opening_tokens(candidate.text) for candidate in candidates]
    taken: set[int] = set()
    matches: dict[int, OutlineMatch] = {}
    floor = 0
    for entry in entries:
        wanted = _tokens(entry.title)
        match = None
        tiers = sorted({candidate.tier for candidate in candidates})
        for region, tier in itertools.product((range(floor, len(candidates)), range(floor)), tiers):
            free = [index for index in region if index not in taken and candidates[index].tier == tier]
            match = (
                _whole(wanted, tokens, free, taken, entry.level)
                or _start(wanted, tokens, candidates, free, entry.level)
                or _alike(wanted, tokens, free, entry.level)
            )
            if match is not None:
                break
        if match is None:
            continue
        matches[match.first] = match
        taken.update(range(match.first, match.last + 1))
        floor = match.last + 1
    return matches


def _whole(
    wanted: list[str], tokens: list[list[str]], free: list[int], taken: set[int], level: int
) -> OutlineMatch | None:
    """A paragraph equal to the entry, numbering aside; else a run of paragraphs that together are (`Chapitre 1`
    over `Vue d'ensemble de LaTeX`, a heading a font change cut in two)."""
    title = _title(wanted)
    longest = max(len(wanted), len(title) + MAX_NUMBERING)
    for parts in range(1, MAX_PARTS + 1):
        for first in free:
            last = first + parts - 1
            if last >= len(tokens) or any(index in taken for index in range(first + 1, last + 1)):
                continue
            if not len(title) <= sum(len(tokens[index]) for index in range(first, last + 1)) <= longest:
                continue  # (the cheap test first: most paragraphs are far longer than a heading)
            joined = [token for index in range(first, last + 1) for token in tokens[index]]
            if joined == wanted or _title(joined) == title:
                return OutlineMatch(first, last, level)
    return None


def _start(
    wanted: list[str], tokens: list[list[str]], candidates: Sequence[Candidate], free: list[int], level: int
) -> OutlineMatch | None:
    """A paragraph a heading is run into, opening with the entry's words (its numbering the entry may lack)."""
    title = _title(wanted)
    for index in free:
        have = tokens[index]
        if not candidates[index].run_in:
            continue
        skip = 0 if have[: len(wanted)] == wanted else _numbering(have)
        size = len(wanted) if skip == 0 else len(title)
        if size and len(have) > skip + size and have[skip : skip + size] == (wanted if skip == 0 else title):
            return OutlineMatch(index, index, level, _token_end(candidates[index].text, skip + size))
    return None


def _token_end(text: str, count: int) -> int:
    """Where the `count`-th word or number of `text` ends."""
    for number, found in enumerate(_TOKEN.finditer(text), start=1):
        if number == count:
            return found.end()
    return len(text)


def _alike(wanted: list[str], tokens: list[list[str]], free: list[int], level: int) -> OutlineMatch | None:
    """A paragraph of about the entry's length that reads nearly like it (a word spelled otherwise)."""
    target = " ".join(_title(wanted))
    for index in free:
        have = " ".join(_title(tokens[index]))
        if target and abs(len(have) - len(target)) <= max(len(target) // 5, 2):
            if difflib.SequenceMatcher(None, target, have, autojunk=False).ratio() >= FUZZY_RATIO:
                return OutlineMatch(index, index, level)
    return None
