"""From edges to tables of cells: `pymupdf.table.TableFinder`'s steps on plain lists.

Edges are snapped to their cluster's average, joined where collinear pieces meet,
crossed into intersections, intersections closed into cells and cells grouped by
shared corners, exactly as PyMuPDF's copy of pdfplumber does it (same float
arithmetic, same orders, so ties and rounding fall the same way). Only the
indexing differs: the quadratic scans look up rows and columns instead.
"""

from __future__ import annotations

import bisect
import itertools
from array import array
from collections.abc import Callable

from pocket_assets.core.extract.table_edges import MIN_LENGTH, SNAP, Box, Edge

# find_tables' join and intersection tolerances (its snap tolerance and edge_min_length, the same setting
# for the drawn lines and the joined edges, are table_edges.SNAP and MIN_LENGTH)
TOLERANCE = 3.0
Cell = tuple[float, float, float, float]


def _clusters(values: list[float]) -> dict[float, int]:
    """`make_cluster_dict`: each distinct value's cluster, values closer than SNAP to the last one sharing it."""
    ordered = sorted(set(values))
    cluster_of: dict[float, int] = {}
    index = 0
    for position, value in enumerate(ordered):
        if position and value > ordered[position - 1] + SNAP:
            index += 1
        cluster_of[value] = index
    return cluster_of


def _snapped(edges: list[Edge], axis: int) -> list[Edge]:
    """`snap_objects`: edges moved (along `axis`: 0 x, 1 y) to their cluster's average position."""
    cluster_of = _clusters([edge[axis] for edge in edges])
    snapped = []
    ordered = sorted(edges, key=lambda edge: cluster_of[edge[axis]])
    for _, group in itertools.groupby(ordered, key=lambda edge: cluster_of[edge[axis]]):
        members = list(group)
        average = sum(edge[axis] for edge in members) / len(members)
        for edge in members:
            shift = average - edge[axis]
            moved = list(edge)
            moved[axis] += shift
            moved[axis + 2] += shift
            snapped.append(moved)
    return snapped


def _joined(edges: list[Edge], horizontal: bool) -> list[Edge]:
    """`join_edge_group`: collinear edges that overlap or come within TOLERANCE made one."""
    start = 0 if horizontal else 1
    ordered = sorted(edges, key=lambda edge: edge[start])
    joined = [ordered[0]]
    for edge in ordered[1:]:
        last = joined[-1]
        if edge[start] <= last[start + 2] + TOLERANCE:
            if edge[start + 2] > last[start + 2]:
                grown = list(last)
                if horizontal:
                    grown[2], grown[4] = edge[2], edge[2] - last[0]
                else:
                    grown[3], grown[5] = edge[3], last[5] + (edge[3] - last[3])
                joined[-1] = grown
        else:
            joined.append(edge)
    return joined


def merged_edges(edges: list[Edge]) -> list[Edge]:
    """`TableFinder.get_edges` ("lines"): edges of at least 1 pt, snapped, joined, then at least MIN_LENGTH."""
    vertical = [edge for edge in edges if not edge[6] and edge[5] >= 1]
    horizontal = [edge for edge in edges if edge[6] and edge[4] >= 1]
    snapped = _snapped(vertical, 0) + _snapped(horizontal, 1)

    def line(edge: Edge) -> tuple[int, float]:
        return (0, edge[1]) if edge[6] else (1, edge[0])

    merged = []
    for (kind, _), group in itertools.groupby(sorted(snapped, key=line), key=line):
        merged += _joined(list(group), horizontal=kind == 0)
    return [edge for edge in merged if (edge[4] if edge[6] else edge[5]) >= MIN_LENGTH]


_Crossings = dict[tuple[float, float], tuple[set[Box], set[Box]]]


def _intersections(edges: list[Edge]) -> _Crossings:
    """`edges_to_intersections`: where a vertical edge meets a horizontal one, with both edges' boxes."""
    vertical = sorted((edge for edge in edges if not edge[6]), key=lambda edge: (edge[0], edge[1]))
    horizontal = sorted((edge for edge in edges if edge[6]), key=lambda edge: (edge[1], edge[0]))
    tops = [edge[1] for edge in horizontal]
    crossings: _Crossings = {}
    for v in vertical:
        x, top, bottom = v[0], v[1], v[3]
        low = bisect.bisect_left(tops, top - TOLERANCE - 1)  # a margin: the exact test below decides
        high = bisect.bisect_right(tops, bottom + TOLERANCE + 1)
        for h in horizontal[low:high]:
            if top <= h[1] + TOLERANCE and bottom >= h[1] - TOLERANCE and h[0] - TOLERANCE <= x <= h[2] + TOLERANCE:
                vertex = (x, h[1])
                if vertex not in crossings:
                    crossings[vertex] = (set(), set())
                crossings[vertex][0].add((v[0], v[1], v[2], v[3]))
                crossings[vertex][1].add((h[0], h[1], h[2], h[3]))
    return crossings


def _cells(crossings: _Crossings) -> list[Cell]:
    """`intersections_to_cells`: from each intersection, the smallest rectangle closed by edges."""
    points = sorted(crossings)
    columns: dict[float, list[tuple[float, float]]] = {}
    rows: dict[float, list[tuple[float, float]]] = {}
    for point in points:
        columns.setdefault(point[0], []).append(point)
        rows.setdefault(point[1], []).append(point)

    def connects(p1: tuple[float, float], p2: tuple[float, float]) -> bool:
        if p1[0] == p2[0] and not crossings[p1][0].isdisjoint(crossings[p2][0]):
            return True
        return p1[1] == p2[1] and not crossings[p1][1].isdisjoint(crossings[p2][1])

    def after(line: list[tuple[float, float]], point: tuple[float, float]) -> list[tuple[float, float]]:
        return line[line.index(point) + 1 :]

    cells = []
    for point in points:
        below, right = after(columns[point[0]], point), after(rows[point[1]], point)
        cell = next(
            (
                (point[0], point[1], right_point[0], below_point[1])
                for below_point in below
                if connects(point, below_point)
                for right_point in right
                if connects(point, right_point)
                and (corner := (right_point[0], below_point[1])) in crossings
                and connects(corner, right_point)
                and connects(corner, below_point)
            ),
            None,
        )
        if cell is not None:
            cells.append(cell)
    return cells


def _corners(cell: Cell) -> tuple[tuple[float, float], ...]:
    x0, top, x1, bottom = cell
    return ((x0, top), (x0, bottom), (x1, top), (x1, bottom))


def _groups(cells: list[Cell]) -> list[list[Cell]]:
    """`cells_to_tables`' grouping: cells sharing a corner with the group, in its order of passes."""
    remaining = list(cells)
    corners: set[tuple[float, float]] = set()
    current: list[Cell] = []
    groups = []
    while remaining:
        count = len(current)
        for cell in list(remaining):
            cell_corners = _corners(cell)
            if not current or any(corner in corners for corner in cell_corners):
                corners |= set(cell_corners)
                current.append(cell)
                remaining.remove(cell)
        if len(current) == count:
            groups.append(list(current))
            corners.clear()
            current.clear()
    if current:
        groups.append(list(current))
    return groups


def _union(cells: list[Cell]) -> Box:
    """The cells' union as `Rect |=` builds it: the first cell as is, then MuPDF's fz_union_rect in C floats
    (an operand that is empty once rounded is skipped)."""
    union: Box = cells[0]
    for cell in cells[1:]:
        a0, a1, a2, a3, b0, b1, b2, b3 = array("f", (*union, *cell))
        if b0 >= b2 or b1 >= b3:
            union = (a0, a1, a2, a3)
        elif a0 >= a2 or a1 >= a3:
            union = (b0, b1, b2, b3)
        else:
            union = (min(a0, b0), min(a1, b1), max(a2, b2), max(a3, b3))
    return union


def grid_tables(edges: list[Edge], has_text: Callable[[Box], bool]) -> list[list[Cell]]:
    """Each table's cells, top to bottom: groups of at least two columns with some text (`has_text`)."""
    tables = _groups(_cells(_intersections(merged_edges(edges))))
    kept = []
    for cells in tables:
        if len({cell[2] for cell in cells}) < 2 or len({cell[0] for cell in cells}) < 2:
            continue
        if has_text(_union(cells)):
            kept.append(cells)
    return sorted(kept, key=lambda cells: min((cell[1], cell[0]) for cell in cells))
