"""Secrets never leave their variable: the summarizer resource sends only what it is allowed to send."""

import shutil
import threading
from http.server import HTTPServer
from pathlib import Path

import pytest
from dagster import DagsterInstance

from pocket_assets.core.tokenizer import load_tokenizer
from pocket_assets.defs.resources import CorpusPaths, SummarizerResource
from pocket_assets.stages.registry import TABLE_SUMMARIES
from pocket_assets.stages.store import PartitionStore
from pocket_assets_tests.core.test_summaries_llm import EchoingEndpoint, FakeEndpoint
from pocket_assets_tests.defs.conftest import materialize_corpus, materialize_export
from pocket_assets_tests.pdf_factory import REPO_ROOT


def test_api_key_env_cannot_name_any_other_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_CLOUD_SECRET", "s3cr3t-value-never-sent")
    resource = SummarizerResource(kind="llm", model="m", api_key_env="SOME_CLOUD_SECRET")
    with pytest.raises(ValueError, match="POCKET_ASSETS_LLM_") as raised:
        resource.summarizer(load_tokenizer(), 50)
    assert "s3cr3t" not in str(raised.value)


def test_the_endpoint_is_named_by_a_variable_and_a_url_with_credentials_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The URL never is a config value (a run's config is stored before our code sees it): a variable names it,
    and a URL holding a password is refused, without repeating it, and never in the stage versions."""
    assert "base_url" not in SummarizerResource.model_fields
    monkeypatch.setenv("POCKET_ASSETS_LLM_BASE_URL", "https://user:pa55word-xyz@llm.example.org/v1")
    resource = SummarizerResource(kind="llm", model="m")
    assert "pa55word" not in repr(resource.setting())
    with pytest.raises(ValueError, match="holds credentials") as raised:
        resource.summarizer(load_tokenizer(), 50)
    assert "pa55word" not in str(raised.value)
    with pytest.raises(ValueError, match="POCKET_ASSETS_LLM_"):
        SummarizerResource(kind="llm", model="m", base_url_env="HOME").summarizer(load_tokenizer(), 50)


SECRET = "sk-planted-0123456789abcdef"


def _served_table_pdf(
    server: HTTPServer, base_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path, CorpusPaths]:
    """The endpoint served in a thread and named by the variables, a fresh DAGSTER_HOME, and a raw folder holding
    one real PDF with a table; returns the home, the output folder and the paths."""
    threading.Thread(target=server.serve_forever, daemon=True).start()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("POCKET_ASSETS_LLM_API_KEY", SECRET)
    monkeypatch.setenv("POCKET_ASSETS_LLM_BASE_URL", base_url)
    raw, out = tmp_path / "raw", tmp_path / "out"
    (raw / "fr").mkdir(parents=True)
    shutil.copyfile(
        REPO_ROOT / "pocket_assets_tests" / "fixtures" / "real" / "regs-serif-small-capitals.pdf",
        raw / "fr" / "table.pdf",
    )
    return home, out, CorpusPaths(raw_dir=str(raw), output_dir=str(out))


def _assert_secret_nowhere(capfd: pytest.CaptureFixture[str], *folders: Path) -> None:
    """The key is in no line printed and no file of these folders."""
    captured = capfd.readouterr()
    assert SECRET not in captured.out + captured.err
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file():
                assert SECRET.encode() not in path.read_bytes(), path


def test_a_key_echoed_by_the_endpoint_is_nowhere_in_the_outputs_the_instance_or_the_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """An LLM endpoint that answers 401 and repeats the Authorization header: the PDF fails (its table cannot be
    summarized) with a reason that names the endpoint's answer, and the key appears in no file and no log."""
    echo = EchoingEndpoint()
    home, out, paths = _served_table_pdf(echo.server, echo.base_url, tmp_path, monkeypatch)
    summarizer = SummarizerResource(kind="llm", model="m", max_retries=0)
    try:
        with DagsterInstance.get() as instance:
            result = materialize_corpus(instance, paths, resources={"summarizer": summarizer})
            assert not result.success
            export = materialize_export(instance, paths)
            assert export.success
    finally:
        echo.server.shutdown()
        echo.server.server_close()
    assert echo.headers and echo.headers[0]["authorization"] == f"Bearer {SECRET}", "the key was sent, and echoed"
    reason = PartitionStore(out / "stages").manifest(TABLE_SUMMARIES, "fr/table.pdf").reason
    assert "HTTP 401" in reason and "Bearer ***" in reason
    _assert_secret_nowhere(capfd, out, home)


def test_a_key_repeated_in_a_successful_answer_ships_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """An endpoint whose 200 answer quotes the key (a summary that repeats what it was sent): the PDF builds, its
    table keeps the extractive summary with a warning naming the table, and the key is in no export, stage file,
    cache, instance file or log."""
    endpoint = FakeEndpoint()
    endpoint.script = [("ok", f"Tableau des sanctions disciplinaires (clé {SECRET}) : nature, durée, instance.")]
    home, out, paths = _served_table_pdf(endpoint.server, endpoint.base_url, tmp_path, monkeypatch)
    try:
        with DagsterInstance.get() as instance:
            assert materialize_corpus(
                instance, paths, resources={"summarizer": SummarizerResource(kind="llm", model="m")}
            ).success
            assert materialize_export(instance, paths).success
    finally:
        endpoint.server.shutdown()
        endpoint.server.server_close()
    assert endpoint.requests, "the endpoint was asked"
    manifest = PartitionStore(out / "stages").manifest(TABLE_SUMMARIES, "fr/table.pdf")
    warnings = manifest.extra.get("warnings", [])
    assert any("fr" in warning and "table 0" in warning and "refused" in warning for warning in warnings), warnings
    assert (out / "chunks_fr.txt").read_text(encoding="utf-8").count("Tableau") >= 1
    _assert_secret_nowhere(capfd, out, home)
