"""`table_type` rules on real tables: the sample corpus's tables and tables copied from chess regulations."""

from __future__ import annotations

import unicodedata

import pymupdf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pocket_assets.core.extract.tables import find_page_tables
from pocket_assets.core.records import TableCells
from pocket_assets.core.tables import types
from pocket_assets.core.tables.types import classify_table, normalize
from pocket_assets_tests.pdf_factory import SAMPLE_RAW

# Cells as `find_tables()` reads them from the sample corpus (see test_sample_table_read_from_the_pdf).
HILL_RACES = TableCells(  # R-data.pdf page 9: a "time" column is a race time, not a schedule
    header=("", "dist", "climb", "time"),
    rows=(("Greenmantle", "2 5 .", "650", "16 083 ."), ("...", "", "", "")),
)
UCB_ADMISSIONS = TableCells(  # R-data.pdf page 18
    header=("Admit", "Gender", "Dept", "A", "B", "C", "D", "E", "F"),
    rows=(
        ("Admitted", "Male", "", "512", "353", "120", "138", "53", "22"),
        ("", "Female", "", "89", "17", "202", "131", "94", "24"),
        ("Rejected", "Male", "", "313", "207", "205", "279", "138", "351"),
        ("", "Female", "", "19", "8", "391", "244", "299", "317"),
    ),
)
ARRAY_CLASSES = TableCells(  # f-array.pdf page 9
    header=("token", "\\@chclass", "\\@chnum", "token", "\\@chclass", "\\@chnum"),
    rows=(("c", "0", "0", "Start", "4", "—"), ("l", "0", "1", "@-arg", "5", "—"), ("r", "0", "2", "!", "6", "—")),
)

# Tables copied from chess regulations.
BERGER_SIX_PLAYERS = TableCells(  # FIDE Handbook C.05, Berger tables for round-robin tournaments
    header=("Round", "Board 1", "Board 2", "Board 3"),
    rows=(
        ("1", "1-6", "2-5", "3-4"),
        ("2", "6-4", "5-3", "1-2"),
        ("3", "2-6", "3-1", "4-5"),
        ("4", "6-5", "1-4", "2-3"),
        ("5", "3-6", "4-2", "5-1"),
    ),
)
CALENDRIER_INTERCLUBS = TableCells(  # an FFE club championship calendar
    header=("Ronde", "Date", "Horaire"),
    rows=(("1", "12/10/2025", "14h00"), ("2", "16/11/2025", "14h00"), ("3", "7/12/2025", "14h00")),
)
DIRECT_ENCOUNTER = TableCells(  # FIDE Arbiters' Seminar, tie-breaks: results between tied players
    header=("Name", "Player 1", "Player 2", "Player 3", "Total"),
    rows=(("Player 1", "*", "1", "½", "1½"), ("Player 2", "0", "*", "½", "½"), ("Player 3", "½", "½", "*", "1")),
)
PROGRESSIVE_SCORE = TableCells(  # FIDE Arbiters' Seminar, sum of progressive scores
    header=("Rd1", "Rd2", "Rd3", "Rd4", "Rd5", "Rd6", "Rd7", "Rd8", "Rd9", "Total"),
    rows=(("1", "2", "3", "4", "5", "6", "6½", "7", "7", "41½"),),
)
POINTS_DE_MATCH = TableCells(  # FFE Championnat de France des Clubs, match points
    header=("Résultat du match", "Points"),
    rows=(("Victoire", "3"), ("Match nul", "2"), ("Défaite", "1"), ("Forfait", "0")),
)
CROSS_TABLE = TableCells(  # a round-robin grid: one column per opponent number
    header=("N°", "Joueur", "1", "2", "3", "4"),
    rows=(("1", "Dupont", "*", "1", "½", "1"), ("2", "Martin", "0", "*", "1", "½")),
)


@pytest.mark.parametrize(
    ("cells", "heading", "expected"),
    [
        (HILL_RACES, None, "other"),
        (UCB_ADMISSIONS, None, "other"),
        (ARRAY_CLASSES, "Classes de caractères", "other"),
        (BERGER_SIX_PLAYERS, "Berger tables", "schedule"),
        (BERGER_SIX_PLAYERS, None, "schedule"),
        (CALENDRIER_INTERCLUBS, None, "schedule"),
        (CALENDRIER_INTERCLUBS, "3.2 Calendrier", "schedule"),
        (DIRECT_ENCOUNTER, "Direct encounter", "scoring"),
        (PROGRESSIVE_SCORE, "Sum of Progressive Scores", "scoring"),
        (POINTS_DE_MATCH, None, "scoring"),
        (CROSS_TABLE, "Grille américaine", "scoring"),
        (CROSS_TABLE, None, "scoring"),
    ],
)
def test_real_tables_get_the_expected_type(cells: TableCells, heading: str | None, expected: str) -> None:
    assert classify_table(cells, heading).table_type == expected


def test_a_heading_alone_decides_and_its_signal_is_reported() -> None:
    verdict = classify_table(UCB_ADMISSIONS, "Départages et barème")
    assert verdict.table_type == "scoring"
    assert verdict.signals == ("caption:bareme", "caption:departages", "cells:results")
    assert verdict.scoring_score == 7


def test_a_lone_header_keyword_is_not_enough() -> None:
    verdict = classify_table(HILL_RACES)
    assert (verdict.schedule_score, verdict.table_type) == (2, "other")


def test_a_tie_goes_to_scoring() -> None:
    cells = TableCells(header=("Ronde", "Points"), rows=(("Alice", "Bob"),))
    verdict = classify_table(cells, "Ronde et points")
    assert verdict.schedule_score == verdict.scoring_score == 5
    assert verdict.table_type == "scoring"


def test_half_points_and_decimals_are_not_dates() -> None:
    cells = TableCells(header=("Joueur", "Score"), rows=(("A", "1/2"), ("B", "2.5"), ("C", "1/2")))
    verdict = classify_table(cells)
    assert "cells:dates" not in verdict.signals
    assert verdict.table_type == "scoring"


def test_normalize_folds_case_accents_and_spelling_variants() -> None:
    assert normalize("DÉPARTAGE Tie-Break cross table ½") == "departage tiebreak crosstable ½"


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(st.sampled_from("aZé É\u0301ﬁ İ-tie break cross table ½x9") | st.characters()))
def test_normalize_takes_a_shortcut_only_where_nfd_changes_nothing(text: str) -> None:
    """ASCII text skips the decomposition: the same as decomposing it and dropping combining marks."""
    decomposed = unicodedata.normalize("NFD", text.lower())
    plain = "".join(char for char in decomposed if not unicodedata.combining(char))
    assert normalize(text) == types._CROSS_TABLE.sub("crosstable", types._TIE_BREAK.sub("tiebreak", plain))


def test_sample_table_read_from_the_pdf() -> None:
    """The hand-copied cells above are what PyMuPDF's table finder reads from the sample PDF.

    The table has no rules, so only the layout model finds it (extraction's default finds ruled tables).
    """
    with pymupdf.open(SAMPLE_RAW / "intl" / "R-data.pdf") as document:
        (found,) = find_page_tables(document[17], use_layout=True)
    assert found.cells == UCB_ADMISSIONS
    assert classify_table(found.cells).table_type == "other"
