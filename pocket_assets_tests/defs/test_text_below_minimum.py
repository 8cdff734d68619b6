"""Text below the minimum through Dagster: no chunk, a warning in the children's metadata and manifest,
and the gates pass (coverage counts it as accounted for)."""

from pathlib import Path

from dagster import DagsterInstance

from pocket_assets.defs.resources import CorpusPaths
from pocket_assets.stages.registry import CHILDREN, VALIDATED_CHUNKS
from pocket_assets_tests.defs.conftest import materialize_corpus, partition_metadata
from pocket_assets_tests.pdf_factory import text_pdf

RULES = "Le joueur ayant le trait touche une piece et doit la jouer si le coup est legal. " * 4


def test_a_document_below_the_minimum_passes_its_gates_with_a_warning(instance: DagsterInstance, tmp_path: Path):
    raw = tmp_path / "raw"
    text_pdf(raw / "fr" / "hello.pdf", ["Hello world"])
    text_pdf(raw / "fr" / "regles.pdf", [RULES, "Fin."])  # a last page below the minimum
    paths = CorpusPaths(
        raw_dir=str(raw), output_dir=str(tmp_path / "out")
    )
    materialize_corpus(instance, paths)
    store = paths.store()
    for key, warning in (("fr/hello.pdf", "p1: text_below_minimum: 'Hello world'"), ("fr/regles.pdf", "p2: ")):
        assert store.manifest(VALIDATED_CHUNKS, key).status == "ok"
        (stored,) = store.manifest(CHILDREN, key).extra["warnings"]
        assert stored.startswith(warning) and "text_below_minimum" in stored
    assert partition_metadata(instance, "children", "fr/hello.pdf")["warnings"] == 1
    assert store.read(CHILDREN, "fr/hello.pdf") == []
