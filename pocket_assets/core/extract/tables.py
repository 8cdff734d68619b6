"""Tables: ruled ones as `find_tables()` finds them, unruled ones from aligned text; each behind a cheap test.

`find_tables()` costs many times plain text extraction; a page whose drawings hold no
crossing rules cannot hold a ruled table, and that test costs less than reading the
text. Its layout model also finds unruled tables but costs more still, so unruled
tables are read from the text dictionary the scan already holds: a run of lines that
each break into pieces far apart on one baseline is a candidate, and only candidates
are cut into columns and checked.
"""

from __future__ import annotations

import bisect
import re
import statistics
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, NamedTuple

from pocket_assets.core.extract.cleanup import clean_text, collapse_spaces, join_lines
from pocket_assets.core.extract.reading_order import DICT_FLAGS, font_style
from pocket_assets.core.extract.turn import turned_words
from pocket_assets.core.mupdf import pymupdf
from pocket_assets.core.records import TableCells

RULE_THICKNESS = 3.0  # a filled rectangle thinner than this is drawn as a rule
CROSSING_MARGIN = 3.0  # a rule this far inside another one crosses it rather than closing a box
RULE_GAP = 2.5  # typesetters leave rules this far apart where they meet
SAME_LINE = 1.0  # rules whose positions across them differ by less lie on one line
MIN_ROW_HEIGHT = 8.0  # pt: a column rule is at least one row of text high


@dataclass(frozen=True, slots=True)
class FoundTable:
    """A table located on the page, with its cells already cleaned."""

    bbox: tuple[float, float, float, float]
    cells: TableCells

    def contains(self, x0: float, y0: float, x1: float, y1: float) -> bool:
        """True when the centre of a text line lies inside the table."""
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        return self.bbox[0] <= cx <= self.bbox[2] and self.bbox[1] <= cy <= self.bbox[3]

    def overlaps(self, other: FoundTable) -> bool:
        return (
            self.bbox[0] < other.bbox[2]
            and other.bbox[0] < self.bbox[2]
            and self.bbox[1] < other.bbox[3]
            and other.bbox[1] < self.bbox[3]
        )


Segment = tuple[float, float, float]  # (fixed coordinate, start, end)


def _rules(drawings: list[dict[str, Any]]) -> tuple[list[Segment], list[Segment]]:
    """Horizontal and vertical rules among the page's lines and rectangles (`drawings`: its `get_cdrawings()`)."""
    horizontal: list[Segment] = []
    vertical: list[Segment] = []
    for path in drawings:
        for item in path.get("items", ()):
            if item[0] == "l":
                (x0, y0), (x1, y1) = item[1], item[2]
                if abs(y1 - y0) < 1:
                    horizontal.append((y0, min(x0, x1), max(x0, x1)))
                elif abs(x1 - x0) < 1:
                    vertical.append((x0, min(y0, y1), max(y0, y1)))
            elif item[0] == "re":
                x0, y0, x1, y1 = item[1]
                x0, x1, y0, y1 = min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1)
                if x1 - x0 < RULE_THICKNESS:
                    vertical.append(((x0 + x1) / 2, y0, y1))
                elif y1 - y0 < RULE_THICKNESS:
                    horizontal.append(((y0 + y1) / 2, x0, x1))
                else:
                    horizontal += [(y0, x0, x1), (y1, x0, x1)]
                    vertical += [(x0, y0, y1), (x1, y0, y1)]
    return horizontal, vertical


def _crosses_inside(inner: Segment, outer: Segment) -> bool:
    """`inner` (perpendicular) meets `outer` strictly inside it, as a column or row separator does."""
    position, start, end = inner
    return (
        outer[1] + CROSSING_MARGIN < position < outer[2] - CROSSING_MARGIN
        and start - RULE_GAP <= outer[0] <= end + RULE_GAP
    )


def may_hold_table(drawings: list[dict[str, Any]], quarter_turned: bool = False) -> bool:
    """The pre-filter: a column rule that meets a row rule inside its length (`drawings`: the page's
    `get_cdrawings()`, on the unrotated page; `quarter_turned`: the page is read turned 90° or 270°,
    so its rows are the unrotated page's vertical rules).

    Plain boxes (framed code, shaded lines) and lone horizontal rules (footnotes,
    title bars) have none, and are the common false alarms of a plain count.
    """
    horizontal, vertical = (_joined(segments) for segments in _rules(drawings))
    if quarter_turned:
        horizontal, vertical = vertical, horizontal
    # Shorter than a line of text: the edges of a shaded bar, not a column rule.
    vertical = [segment for segment in vertical if segment[2] - segment[1] >= MIN_ROW_HEIGHT]
    if len(horizontal) < 2 or not vertical:
        return False
    return any(_crosses_inside(v, h) for v in vertical for h in horizontal)


def _joined(segments: list[Segment]) -> list[Segment]:
    """Collinear rules that meet joined into one: office suites draw each cell's borders apart,
    so their grid has no rule crossing another inside it until the pieces are put end to end.
    Their pieces of one rule may sit a fraction of a point apart across it (135.03 and 134.91):
    the pieces of a line are joined in the order they run along it, whatever that jitter."""
    joined: list[Segment] = []
    for line in _lines(segments):
        line.sort(key=itemgetter(1))
        position, start, end = line[0]
        for _, piece_start, piece_end in line[1:]:
            if piece_start > end + RULE_GAP:
                joined.append((position, start, end))
                start = piece_start
            end = max(end, piece_end)
        joined.append((position, start, end))
    return joined


def _lines(segments: list[Segment]) -> list[list[Segment]]:
    """The segments grouped by the line they lie on: positions each less than SAME_LINE from the next."""
    lines: list[list[Segment]] = []
    for segment in sorted(segments):
        if lines and segment[0] - lines[-1][-1][0] < SAME_LINE:
            lines[-1].append(segment)
        else:
            lines.append([segment])
    return lines


def _cell_text(value: str | None) -> str:
    return collapse_spaces(clean_text(value or "").replace("\n", " "))


class _CentredWords(NamedTuple):
    """The page's words by the height of their centre: `heights` sorted, `words` each (centre y, centre x, word)."""

    heights: list[float]
    words: list[tuple[float, float, tuple]]


def _centred_words(words: list[tuple]) -> _CentredWords:
    centred = sorted((((word[1] + word[3]) / 2, (word[0] + word[2]) / 2, word) for word in words), key=itemgetter(0))
    return _CentredWords([cy for cy, _, _ in centred], centred)


Cell = tuple[float, float, float, float]


def _cell_texts(cells: list[Cell], words: _CentredWords) -> dict[Cell, str]:
    """Each cell's words, in reading order, separated as on the page; a word in the smallest cell holding its centre.

    `Table.extract()` joins characters and loses the spaces TeX never writes
    (`insèredecl directemententête`), so cells are read from MuPDF's words instead.
    The "lines" strategy may also close a box around a block of the grid (turned pages
    above all): read whole, that box would repeat the words of every cell inside it, so
    it keeps only the words no smaller cell holds (a caption inside the table's frame).
    Only the words of a cell's height are looked at: a page's table has hundreds of cells.
    """
    taken: set[int] = set()
    texts = {}
    for cell in sorted(set(cells), key=lambda box: ((box[2] - box[0]) * (box[3] - box[1]), box)):
        x0, y0, x1, y1 = cell
        start, end = bisect.bisect_left(words.heights, y0), bisect.bisect_right(words.heights, y1)
        inside = [index for index in range(start, end) if index not in taken and x0 <= words.words[index][1] <= x1]
        taken.update(inside)
        cell_words = sorted((words.words[index][2] for index in inside), key=lambda word: (word[5], word[6], word[7]))
        lines: dict[tuple[int, int], list[str]] = {}
        for word in cell_words:
            lines.setdefault((word[5], word[6]), []).append(word[4])
        texts[cell] = _cell_text(join_lines(" ".join(line) for line in lines.values()))
    return texts


def find_page_tables(
    page: pymupdf.Page, textpage: pymupdf.TextPage | None = None, use_layout: bool = False
) -> list[FoundTable]:
    """Tables of at least 2 rows and 2 columns with some text, in top-to-bottom order, as `page.find_tables()`
    finds them on the page as shown (turned by its `/Rotate`, or by `turn.turned` for reading).

    Extraction finds ruled tables only (`use_layout=False`); the layout model also finds
    unruled ones but costs many times plain text extraction per page. `textpage`: the page's own
    text read with DICT_FLAGS (the scan's), so the cells' words are not read again.
    """
    finder = page.find_tables(use_layout=use_layout)
    if finder is None:  # find_tables() reports its own failures by returning None
        raise RuntimeError("PyMuPDF's find_tables() failed on the page")
    if not finder.tables:
        return []
    words = turned_words(page.get_text("words", flags=DICT_FLAGS, textpage=textpage), page)
    centred = _centred_words(words)
    found = []
    for table in finder.tables:
        texts = _cell_texts(table.cells, centred)
        rows = [tuple("" if cell is None else texts[cell] for cell in row.cells) for row in table.rows]
        rows = [row for row in rows if any(row)]
        if len(rows) < 2 or max(len(row) for row in rows) < 2:
            continue
        # The first extracted row is the header: an "external" header found above the
        # bbox would duplicate text that is already read as a paragraph.
        x0, y0, x1, y1 = (float(value) for value in table.bbox)
        found.append(FoundTable((x0, y0, x1, y1), TableCells(header=rows[0], rows=tuple(rows[1:]))))
    found.sort(key=lambda table: (table.bbox[1], table.bbox[0]))
    return found


def pipe_table(cells: TableCells) -> str:
    """The table as a Markdown pipe table: header row, `|---|` separator, one line per row."""
    width = max([len(cells.header)] + [len(row) for row in cells.rows])

    def render(row: tuple[str, ...]) -> str:
        padded = list(row) + [""] * (width - len(row))
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in padded) + " |"

    separator = "|" + "|".join(["---"] * width) + "|"
    return "\n".join([render(cells.header), separator, *(render(row) for row in cells.rows)])


# Unruled tables. Distances are in line heights (`ROW_*`) or in em of the text (`*_GUTTER`).
PIECE_GAP = 0.8  # pieces of one baseline this far apart are separate cells (word spaces are ~0.3)
ROW_GAP = 1.5  # a wider blank between two rows ends the table (a header rule leaves ~1.2)
SAME_BASELINE = 0.35  # pieces whose bottoms differ by less than this share a row
MIN_COLUMN_LINES = 5  # lines on each side of the page middle that make a two-column page
TWO_COLUMN_CROSSING = 0.2  # at most this share of lines across the middle on a two-column page
COLUMN_LINE_WIDTH = 0.25  # of the page width: the usual line of a text column (a table's cells are narrower)
MAX_PADDED_MEAN_WORDS = 8.0  # cells of a table whose rows are padded apart (office tables) may hold phrases
MIN_ROWS = 3  # header and two rows: fewer is a pair of lines that happen to align
MIN_PADDED, PADDED_SHARE = 2, 3  # rows padded apart: at least 2 gaps and a third of them (not just a header rule)
PADDING = 1.1  # a row gap this much wider than the single spacing beside it is padding
WRAP_PITCH = 1.3  # baseline to baseline, in type sizes: at most this, the next line of the same cell
TEXT_GUTTER = 0.75  # em, proportional columns: wider than any justified word space
MONO_GUTTER = 0.4  # monospaced columns (printed data frames) may be one space apart
ALIGN_TOLERANCE = 1.5  # points: cells of one column share a left, right or centre edge this closely
ALIGNED_SHARE = 0.6  # share of a column's cells that must share that edge
MAX_MEAN_WORDS = 3.0  # cells of a table are short; prose laid out in columns is not
MIN_COLUMN_FILL = 0.5  # a column empty in most rows is a phrase cut apart, not a column
MAX_SENTENCES = 1  # more cells that read as sentences make a definition list or margin notes
_SENTENCE = re.compile(r"\S+\s+\S+\s+.*\.$")
_PAGE_NUMBER = re.compile(r"^\d{1,4}$")
_ELISION = re.compile(r"^\s*(?:\.\.\.|…)\s*$")
_SIZE = itemgetter("size")
_CODE = re.compile(r"<-|[(){};=\\\"#]|^>|^\+\s")  # R and TeX code among monospaced cells


class _Piece(NamedTuple):
    """A raw text line of the page dictionary: one run of text on a baseline.

    Named tuples, not frozen dataclasses: every line of every page becomes one, and a
    tuple is built in C (a frozen dataclass sets each field through object.__setattr__;
    `_make` skips the generated `__new__` too). Its spans are the page dictionary's own list.
    """

    x0: float
    y0: float
    x1: float
    y1: float
    spans: list[dict[str, Any]]


_Row = list[_Piece]  # pieces sharing a baseline, left to right


class _Word(NamedTuple):
    x0: float
    x1: float
    text: str


def _page_columns(data: dict[str, Any]) -> list[list[_Piece]]:
    """The page's raw lines, one list per page column when the text is set in two columns.

    Lines of two page columns share baselines by chance; read together they look like a
    two-column table of prose, and a table set inside one column gets the other's lines.
    """
    pieces = [
        _Piece._make((*raw["bbox"], raw["spans"]))
        for block in data["blocks"]
        if block.get("type", 0) == 0
        for raw in block["lines"]
    ]
    middle = data.get("width", 0.0) / 2
    left = [piece for piece in pieces if piece.x1 <= middle]
    right = [piece for piece in pieces if piece.x0 >= middle]
    crossing = len(pieces) - len(left) - len(right)
    if (
        min(len(left), len(right)) >= MIN_COLUMN_LINES
        and crossing < TWO_COLUMN_CROSSING * len(pieces)
        and all(_upper_quartile_width(side) >= COLUMN_LINE_WIDTH * 2 * middle for side in (left, right))
    ):
        return [left, right, [piece for piece in pieces if piece.x0 < middle < piece.x1]]
    return [pieces]


def _upper_quartile_width(pieces: list[_Piece]) -> float:
    """Most lines of a text column run its full width, whatever table or heading it also holds."""
    return statistics.quantiles([piece.x1 - piece.x0 for piece in pieces], n=4)[2]


def _page_rows(pieces: list[_Piece]) -> list[_Row]:
    """Raw lines grouped by baseline across blocks, top to bottom.

    Across blocks, because MuPDF often makes each column of a table its own block.
    """
    pieces = sorted(pieces, key=lambda piece: piece.y1)
    rows: list[_Row] = []
    for piece in pieces:
        if rows:
            first = rows[-1][0]
            if abs(piece.y1 - first.y1) < SAME_BASELINE * max(first.y1 - first.y0, 1.0):
                rows[-1].append(piece)
                continue
        rows.append([piece])
    for row in rows:
        row.sort(key=lambda piece: piece.x0)
    return rows


def _is_split(row: _Row) -> bool:
    """The row breaks into pieces far apart: cells, a tab stop, or two page columns."""
    return len(row) > 1 and any(
        right.x0 - left.x1 >= PIECE_GAP * max(left.y1 - left.y0, 1.0) for left, right in zip(row, row[1:])
    )


def _height(row: _Row) -> float:
    return max(max(piece.y1 - piece.y0 for piece in row), 1.0)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A run of split rows, with the rows right above and below it (a listing around it makes it code)."""

    rows: list[_Row]
    above: _Row | None
    below: _Row | None


def aligned_candidates(data: dict[str, Any]) -> list[Candidate]:
    """The pre-filter: runs of at least MIN_ROWS consecutive split rows.

    Reads only line boxes, never characters, so it costs a sort of the page's lines.
    """
    candidates: list[Candidate] = []
    for pieces in _page_columns(data):
        candidates += _runs(_page_rows(pieces))
    return candidates


def _runs(rows: list[_Row]) -> list[Candidate]:
    """Runs of split rows; in a table whose rows are padded apart, with its cells' wrapped lines."""
    candidates: list[Candidate] = []
    split = [_is_split(row) for row in rows]
    start = 0
    while start < len(rows):
        if not split[start]:  # most rows: no run starts here
            start += 1
            continue
        end = _run_end(rows, split, start, with_wraps=True)
        if not _padded(rows[start:end]):
            end = _run_end(rows, split, start, with_wraps=False)
        if end - start >= MIN_ROWS:
            above = rows[start - 1] if start else None
            below = rows[end] if end < len(rows) else None
            candidates.append(Candidate(rows[start:end], above, below))
        start = max(end, start + 1)
    return candidates


def _run_end(rows: list[_Row], split: list[bool], start: int, with_wraps: bool) -> int:
    """Where the run of split rows (`split`: each row's `_is_split`) from `start` ends."""
    end = start
    while (
        end < len(rows)
        and (split[end] or (with_wraps and end > start and _wraps(rows[end - 1], rows[end])))
        and (end == start or rows[end][0].y0 - rows[end - 1][0].y1 <= ROW_GAP * _height(rows[end - 1]))
    ):
        end += 1
    return end


def _size(row: _Row) -> float:
    return max([max(map(_SIZE, piece.spans)) for piece in row])


def _pitch(upper: _Row, lower: _Row) -> float:
    """Baseline to baseline, in the upper row's type size."""
    return (lower[0].y1 - upper[0].y1) / max(_size(upper), 1.0)


def _wraps(upper: _Row, lower: _Row) -> bool:
    """`lower` is set at single line spacing under `upper`: maybe the next line of a cell's text."""
    return _pitch(upper, lower) <= WRAP_PITCH


def _padded(rows: list[_Row]) -> bool:
    """Rows padded apart, with lines at single spacing between some: wrapped cells of an office table.

    The padding must show at least twice and in a third of the gaps (a header rule alone
    is not it), and be clearly wider than the single spacing beside it (not loose leading).
    """
    pitches = [_pitch(upper, lower) for upper, lower in zip(rows, rows[1:])]
    if not pitches:
        return False
    single = min(pitches)
    if single > WRAP_PITCH:
        return False
    padded = sum(pitch >= PADDING * single and pitch > WRAP_PITCH for pitch in pitches)
    return padded >= MIN_PADDED and padded * PADDED_SHARE >= len(pitches)


def _join_wrapped(rows: list[_Row]) -> list[_Row]:
    """Lines of wrapped cells joined to their row, when the table pads its rows apart.

    Office tables leave space between rows, so a line at single spacing below a
    row (`Subventions de l'Etat ...` / `établissements publics`) continues one of its
    cells. A table whose rows are all single-spaced (LaTeX's tabular) keeps every line.
    """
    if not _padded(rows):
        return rows
    joined = [list(rows[0])]
    for upper, lower in zip(rows, rows[1:]):
        if _wraps(upper, lower):
            joined[-1].extend(lower)
        else:
            joined.append(list(lower))
    return joined


def _words(piece: _Piece) -> list[_Word]:
    words = []
    for span in piece.spans:
        text = span["text"].strip()
        if text:
            box = span["bbox"]
            words.append(_Word._make((box[0], box[2], text)))
    return words


def _all_mono(rows: list[_Row]) -> bool:
    """Every visible span monospaced, line numbers in another font aside (as `layout` reads listings)."""
    return all(
        font_style(span["font"], span["flags"])[1] or text.isdigit()
        for row in rows
        for piece in row
        for span in piece.spans
        if (text := span["text"].strip())
    )


def _columns(words: list[_Word], gutter: float) -> list[tuple[float, float]]:
    """Column extents: x ranges covered by some word, split where no row has text for `gutter` points."""
    columns: list[tuple[float, float]] = []
    for word in sorted(words, key=lambda word: word.x0):
        if columns and word.x0 - columns[-1][1] < gutter:
            columns[-1] = (columns[-1][0], max(columns[-1][1], word.x1))
        else:
            columns.append((word.x0, word.x1))
    return columns


def _aligned(extents: list[tuple[float, float]]) -> bool:
    """Most cells of a column share their left, right or centre edge (numbers right, labels left)."""
    if len(extents) < MIN_ROWS:
        return True
    for edge in (
        [x0 for x0, _ in extents],
        [x1 for _, x1 in extents],
        [(x0 + x1) / 2 for x0, x1 in extents],
    ):
        best = max(sum(abs(other - value) <= ALIGN_TOLERANCE for other in edge) for value in edge)
        if best >= ALIGNED_SHARE * len(edge):
            return True
    return False


def _grid(rows: list[_Row], gutter: float) -> tuple[list[list[str]], list[list[tuple[float, float]]]] | None:
    """Rows of cell texts and, per column, the extents of its non-empty cells; None without 2 columns."""
    row_words = [[word for piece in row for word in _words(piece)] for row in rows]
    columns = _columns([word for words in row_words for word in words], gutter)
    if len(columns) < 2:
        return None
    cells: list[list[str]] = []
    extents: list[list[tuple[float, float]]] = [[] for _ in columns]
    for words in row_words:
        row_cells: list[list[_Word]] = [[] for _ in columns]
        for word in words:
            index = next(i for i, (_, x1) in enumerate(columns) if word.x0 <= x1)
            row_cells[index].append(word)
        cells.append([_cell_text(" ".join(word.text for word in cell)) for cell in row_cells])
        for index, cell in enumerate(row_cells):
            if cell:
                extents[index].append((cell[0].x0, max(word.x1 for word in cell)))
    return cells, extents


def _reads_as_table(
    cells: list[list[str]], extents: list[list[tuple[float, float]]], mono: bool, padded: bool = False
) -> bool:
    """The guards against what also aligns: prose columns, definition lists, margin notes, code, contents.

    Prose is set at single spacing; rows padded apart are a table's, so their cells may be phrases.
    """
    filled = [cell for row in cells for cell in row if cell]
    if any(sum(bool(cell) for cell in row) < 2 for row in cells) or _lists_contents(cells):
        return False
    if statistics.fmean(len(cell.split()) for cell in filled) > (MAX_PADDED_MEAN_WORDS if padded else MAX_MEAN_WORDS):
        return False
    if sum(bool(_SENTENCE.match(cell)) for cell in filled) > MAX_SENTENCES:
        return False
    if any(sum(bool(row[index]) for row in cells) < MIN_COLUMN_FILL * len(cells) for index in range(len(cells[0]))):
        return False
    if mono and any(_CODE.search(cell) for cell in filled):
        return False
    return all(_aligned(column) for column in extents)


def _lists_contents(cells: list[list[str]]) -> bool:
    """Titles, each with a page number at the right, in page order: a table of contents without leaders."""
    if len(cells[0]) != 2 or not all(_PAGE_NUMBER.match(row[1]) for row in cells):
        return False
    numbers = [int(row[1]) for row in cells]
    return numbers == sorted(numbers)


def _in_listing(neighbour: _Row | None, run: list[_Row]) -> bool:
    """A monospaced line right above or below the rows: they are a program's output inside a code listing.

    Such output stays in the listing's code block; a printed data frame shown on
    its own, between paragraphs, is a table. A lone "..." eliding further rows
    belongs to the output, not to the listing.
    """
    if neighbour is None or _ELISION.match(" ".join(span["text"] for piece in neighbour for span in piece.spans)):
        return False
    top, bottom = (neighbour, run[0]) if neighbour[0].y1 <= run[0][0].y0 else (run[-1], neighbour)
    opening = next((span for piece in neighbour for span in piece.spans if span["text"].strip()), None)
    if opening is None:  # a line of blanks only
        return False
    return bottom[0].y0 - top[0].y1 <= ROW_GAP * _height(top) and font_style(opening["font"], opening["flags"])[1]


def find_aligned_tables(candidates: list[Candidate]) -> list[FoundTable]:
    """Unruled tables among the pre-filter's candidates, in top-to-bottom order."""
    found = []
    for candidate in candidates:
        run = candidate.rows
        mono = _all_mono(run)
        if mono and (_in_listing(candidate.above, run) or _in_listing(candidate.below, run)):
            continue
        sizes = [span["size"] for row in run for piece in row for span in piece.spans]
        gutter = (MONO_GUTTER if mono else TEXT_GUTTER) * statistics.median(sizes)
        rows = _join_wrapped(run)
        grid = _grid(rows, gutter)
        if grid is None or not _reads_as_table(*grid, mono, padded=rows is not run):
            continue
        cells = grid[0]
        pieces = [piece for row in run for piece in row]
        bbox = (
            min(piece.x0 for piece in pieces),
            min(piece.y0 for piece in pieces),
            max(piece.x1 for piece in pieces),
            max(piece.y1 for piece in pieces),
        )
        found.append(FoundTable(bbox, TableCells(header=tuple(cells[0]), rows=tuple(tuple(row) for row in cells[1:]))))
    return found
