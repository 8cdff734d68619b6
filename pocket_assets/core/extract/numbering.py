"""How documents number their parts: `TITRE Ier`, `CHAPITRE 2`, `Section 3`, `Article 4.1`, `Art. 5`, `6.7.`.

A reader places a heading by its label before its typography: a TITRE holds
CHAPITREs, which hold Sections, which hold Articles; `6.7.1` sits under `6.7`.
This module reads the label at the start of a line (its kind, its number as
the document writes it without decoration, and its depth) and gives each kind
its rank. It is shared by heading detection (extract) and by the heading tree
(article numbers), so both read the same labels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# Named kinds, outermost first; synonyms share a rank. `annexe` stands apart from the body's ladder.
KIND_RANKS = {
    "livre": 10,
    "book": 10,
    "partie": 12,
    "part": 12,
    "annexe": 14,
    "appendix": 14,
    "annex": 14,
    "titre": 20,
    "chapitre": 30,
    "chapter": 30,
    "section": 40,
    "sous-section": 50,
    "subsection": 50,
    "paragraphe": 52,
    "article": 60,
    "art": 60,
}
ARTICLE_RANK = KIND_RANKS["article"]
_ANNEX = re.compile(r"^(?:annexes?|annex|appendix|appendices)\b", re.IGNORECASE)
DECIMAL = "decimal"  # `6.7.` or `1.2.3`: a bare dotted number
# What may part a label from its title or its text: hyphen, the non-breaking and figure hyphens word processors
# put in "Art. 7.‑ Le siège", en and em dashes, the minus sign.
DASHES = "-‐‑‒–—―−"
_DASH = f"[{re.escape(DASHES)}]"

_KIND_WORDS = "|".join(sorted((re.escape(kind) for kind in KIND_RANKS), key=len, reverse=True))
# The number a label carries: 12, 4.1, 3-1, a code's L. 131-8 / R232-10, 1er / 1ER / Ier / 1re, II, A, A.2;
# then the Latin suffix of an article inserted later (12 bis, 4 ter), which is part of its name.
_NUMBER = r"(?:\d+(?:[.-]\d+)*|(?-i:[LRDA]\.?\s?\d+(?:-\d+)*|[IVXLC]+|[A-Z](?:\.\d+)*))(?:er|re|ère)?"
_INSERTED = r"(?:\s+(?:bis|ter|quater|quinquies|sexies|septies|octies|nonies|decies))?"
# Numbers written as words: "Article premier", "CHAPITRE PREMIER", "Section unique".
_NUMBER_WORDS = {"premier": "1", "première": "1", "unique": "unique"}
_NAMED = re.compile(
    rf"^(?P<kind>{_KIND_WORDS})(?:\.\s*|\s+)(?P<number>(?:{_NUMBER}|premier|première|unique){_INSERTED})\.?"
    rf"(?=\s|$|[:.,)]|{_DASH})",
    re.IGNORECASE,
)
# "3.9.", "2.1 Title", "A.2 Title", "6." only with a dot after it, or a dash ("6 – Sanctions"); a letter
# item of a numbered paragraph is part of its number ("5.6 a) Phase de zone", "5.6. b) Phase finale").
_DECIMAL = re.compile(
    rf"^(?P<number>\d+(?:\.\d+)+|[A-Z](?:\.\d+)+|\d+(?=\.|\s{_DASH}\s))\.?(?:\s?(?P<letter>[a-z])\))?(?=\s|$)"
)
_ORDINAL_SUFFIX = re.compile(r"(?:er|re|ère)(?=\s|$)", re.IGNORECASE)


@dataclass(frozen=True)
class Label:
    """The numbering a line opens with."""

    kind: str  # a key of KIND_RANKS (lower case, synonyms kept) or DECIMAL
    number: str  # as the document numbers it, without decoration: "1" for "1er" or "premier", "4.1", "II", "12 bis", "5.6 a"
    text: str  # the label as written ("Article 1er", "6.7.")

    @property
    def depth(self) -> int:
        """Dotted depth of the number: 1 for `6` or `Article 6`, 3 for `6.7.1` and for `6.7 a)`."""
        return self.number.count(".") + 1 + self.number.count(" ") * (self.kind == DECIMAL)

    @property
    def rank(self) -> int:
        """Outermost first: named kinds by KIND_RANKS, bare dotted numbers below articles by depth."""
        if self.kind == DECIMAL:
            return ARTICLE_RANK + self.depth
        return KIND_RANKS[self.kind]

    @property
    def is_article(self) -> bool:
        """Articles and dotted paragraphs are what a citation names ("article 4.1")."""
        return self.kind in ("article", "art") or self.kind == DECIMAL


@lru_cache(maxsize=8192)
def read_label(text: str) -> Label | None:
    """The label at the start of `text`, else None (a bare `3` may open a list, so it needs a dot after it).
    Cached: extraction asks it of each short paragraph several times (shape, level, title)."""
    text = text.lstrip("#\\ ")
    named = _NAMED.match(text)
    if named:
        number = named.group("number")
        head, _, inserted = number.partition(" ")
        head = _NUMBER_WORDS.get(head.lower()) or _ORDINAL_SUFFIX.sub("", head) or head
        bare = f"{head} {inserted.lower()}" if inserted else head
        return Label(named.group("kind").lower(), bare, named.group(0).rstrip(f".:,) {DASHES}"))
    decimal = _DECIMAL.match(text)
    if decimal:
        letter = decimal.group("letter")
        number = f"{decimal.group('number')} {letter}" if letter else decimal.group("number")
        return Label(DECIMAL, number, decimal.group(0).strip())
    return None


def opens_annex(heading: str) -> bool:
    """`Annexe`, `Annexe A`, `Appendix B`, `Appendices`: the part after the articles."""
    return bool(_ANNEX.match(heading.lstrip("#\\ ")))


def is_bare_label(heading: str) -> bool:
    """A heading that is its label alone (`Article 15`, `TITRE II`): its title may follow apart."""
    text = heading.lstrip("#\\ ").rstrip(f" .:{DASHES}")
    label = read_label(text)
    return label is not None and label.text == text
