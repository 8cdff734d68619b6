"""Versions come from the settings a run really uses: each knob marks exactly the PDFs it affects stale.

One real build of a small corpus, then the project's staleness (what `pocket-assets stale`,
`build --stale`, the schedule and the sensor read) under changed settings.
"""

import gzip
import json
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from dagster import instance_for_test

from pocket_assets.cli.build import run_build
from pocket_assets.cli.stale import list_stale
from pocket_assets.defs.planning import plan_folder
from pocket_assets.defs.resources import (
    CorpusPaths,
    DeviceProfileResource,
    ExtractionResource,
    SettingResources,
    SummarizerResource,
    environment_versions,
)
from pocket_assets.stages.registry import PAGES, PARENTS, STAGES
from pocket_assets_tests.defs.conftest import materialize_corpus
from pocket_assets_tests.pdf_factory import REPO_ROOT, small_corpus

KEYS = ["fr/reglement.pdf", "intl/rules.pdf"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> CorpusPaths:
    root = tmp_path_factory.mktemp("versions")
    small_corpus(root / "raw")
    paths = CorpusPaths(
        raw_dir=str(root / "raw"), output_dir=str(root / "out")
    )
    with instance_for_test() as instance:
        assert materialize_corpus(instance, paths).success
    return paths


def _stale(paths: CorpusPaths, resources: SettingResources | None = None) -> dict[str, str]:
    return {pdf.key: pdf.reasons[0] for pdf in plan_folder(paths, resources=resources)[0].to_build}


def test_nothing_changed_nothing_stale(built: CorpusPaths, capsys: pytest.CaptureFixture[str]) -> None:
    assert _stale(built) == {}
    list_stale(built.raw_dir, built.output_dir)
    assert capsys.readouterr().out.startswith("0 of 2 PDF(s)")


def test_a_build_with_nothing_stale_builds_nothing(
    built: CorpusPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    assert run_build([], [], False, built.raw_dir, built.output_dir) == 0
    printed = capsys.readouterr().out
    assert "building 0 PDF(s)" in printed and "2 PDF(s) up to date" in printed


def test_another_tokenizer_file_makes_every_pdf_stale(
    built: CorpusPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tokenizer_file = tmp_path / "tokenizer.json"
    vendored = resources.files("pocket_assets.core.data").joinpath("gemma3-tokenizer.json.gz").read_bytes()
    tokenizer_file.write_bytes(gzip.decompress(vendored))
    monkeypatch.setenv("POCKET_ASSETS_TOKENIZER", str(tokenizer_file))
    stale = _stale(built)
    assert sorted(stale) == KEYS and all(reason.startswith("parents built with") for reason in stale.values())
    list_stale(built.raw_dir, built.output_dir)
    assert capsys.readouterr().out.startswith("2 of 2 PDF(s)")


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        ("CHUNK_SIZE_TOKENS", "300", "child_tokens (CHUNK_SIZE_TOKENS) 450 → 300"),
        ("EMBED_MAX_TOKENS", "256", "device.embed_max_tokens (EMBED_MAX_TOKENS) 512 → 256"),
        ("POCKET_ASSETS_DEVICE_PRESET", "embeddinggemma-256", "device.llm_context_tokens 2048 → 1024"),
    ],
)
def test_chunk_size_window_or_device_from_the_environment_makes_every_pdf_stale_naming_what_changed(
    built: CorpusPaths, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, named: str
) -> None:
    """The sensors, the schedule and the command line judge with the environment's device: a preset set there
    stays built (a launchpad-only preset would be built back by the next refresh); the reason names the field."""
    monkeypatch.setenv(variable, value)
    stale = _stale(built)
    assert sorted(stale) == KEYS and all(reason.startswith("parents built with") for reason in stale.values())
    assert all(named in reason for reason in stale.values()), stale


def test_an_unknown_device_preset_in_the_environment_is_refused_naming_the_choices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("POCKET_ASSETS_DEVICE_PRESET", "pixel-9")
    with pytest.raises(ValueError, match=r"POCKET_ASSETS_DEVICE_PRESET must be one of embeddinggemma-256, .*'pixel-9'"):
        DeviceProfileResource.from_environment()


@pytest.mark.parametrize(
    ("change", "first_stale_stage"),
    [
        ({"extraction": ExtractionResource(ocr=False)}, "pages"),
        ({"extraction": ExtractionResource(detect_tables=False)}, "pages"),
        ({"summarizer": SummarizerResource(kind="llm", model="qwen")}, "table_summaries"),
        ({"device": DeviceProfileResource(preset="embeddinggemma-256")}, "parents"),
        ({"device": DeviceProfileResource(llm_context_tokens=4096)}, "parents"),
    ],
)
def test_extraction_summarizer_and_device_settings_mark_their_stage_and_after(
    built: CorpusPaths, change: dict, first_stale_stage: str
) -> None:
    environment = SettingResources.from_environment()
    changed = SettingResources(**{**environment.as_resources(), **change})
    stale = _stale(built, changed)
    assert sorted(stale) == KEYS
    assert all(reason.startswith(f"{first_stale_stage} built with") for reason in stale.values())


def test_a_launchpad_override_is_stamped_and_seen_as_stale(built: CorpusPaths, tmp_path: Path) -> None:
    """A run whose config changes a setting stamps its own versions; against the environment's,
    only the PDF it built is stale, from the stage that read the setting."""
    paths = CorpusPaths(raw_dir=built.raw_dir, output_dir=str(tmp_path / "out"))
    shutil.copytree(built.output_path, paths.output_path)
    with instance_for_test() as instance:
        result = materialize_corpus(
            instance, paths, keys=["intl/rules.pdf"], resources={"extraction": ExtractionResource(detect_tables=False)}
        )
        assert result.success
    assert list(_stale(paths)) == ["intl/rules.pdf"]
    assert _stale(paths)["intl/rules.pdf"].startswith("pages built with")


def test_dagster_code_versions_are_the_stage_versions_of_the_environment_at_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Dagster reads code versions when the code location loads: a fresh process with another chunk
    size shows other versions for the chunking stages, the same for the stages before them."""
    monkeypatch.setenv("CHUNK_SIZE_TOKENS", "300")
    code = (
        "import json; from pathlib import Path; from dagster import load_from_defs_folder\n"
        "import pocket_assets.definitions as location\n"
        "graph = load_from_defs_folder(path_within_project=Path(location.__file__).parent).resolve_asset_graph()\n"
        "print(json.dumps({key.to_user_string(): graph.get(key).code_version for key in graph.get_all_asset_keys()}))"
    )
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO_ROOT).stdout)
    smaller_children = environment_versions()
    assert {stage.name: loaded[stage.name] for stage in STAGES} == {stage.name: v for stage, v in smaller_children.items()}
    monkeypatch.delenv("CHUNK_SIZE_TOKENS")
    default = environment_versions()
    assert default[PARENTS] != smaller_children[PARENTS] and default[PAGES] == smaller_children[PAGES]
