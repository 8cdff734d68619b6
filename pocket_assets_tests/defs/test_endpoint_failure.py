"""An LLM endpoint that refuses the key (HTTP 401): the PDF fails with the endpoint's answer, said as the endpoint's
to fix, never as a crash of ours ("this is a bug") with a traceback."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from dagster import DagsterInstance

from pocket_assets.cli.build import summarize_pdf
from pocket_assets.defs.resources import CorpusPaths, SummarizerResource
from pocket_assets.stages.registry import STAGES, TABLE_SUMMARIES
from pocket_assets_tests.core.test_summaries_llm import FakeEndpoint
from pocket_assets_tests.defs.conftest import materialize_corpus
from pocket_assets_tests.pdf_factory import REPO_ROOT

TABLE_PDF = REPO_ROOT / "pocket_assets_tests" / "fixtures" / "real" / "regs-serif-small-capitals.pdf"


def test_an_endpoint_refusing_the_key_fails_the_pdf_as_the_endpoints_answer_not_a_bug(
    tmp_path: Path, instance: DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint = FakeEndpoint()
    endpoint.script = [("status", 401)]
    threading.Thread(target=endpoint.server.serve_forever, daemon=True).start()
    monkeypatch.setenv("POCKET_ASSETS_LLM_BASE_URL", endpoint.base_url)
    monkeypatch.setenv("POCKET_ASSETS_LLM_API_KEY", "sk-wrong-key")
    raw = tmp_path / "raw"
    (raw / "fr").mkdir(parents=True)
    shutil.copyfile(TABLE_PDF, raw / "fr" / "table.pdf")
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(tmp_path / "out"))
    try:
        result = materialize_corpus(instance, paths, resources={"summarizer": SummarizerResource(kind="llm", model="m")})
    finally:
        endpoint.server.shutdown()
        endpoint.server.server_close()
    assert not result.success and len(endpoint.requests) == 1, "a 401 is not retried"

    reason = paths.store().manifest(TABLE_SUMMARIES, "fr/table.pdf").reason
    assert "HTTP 401" in reason and "the endpoint's answer, not a bug" in reason, reason
    assert "check its URL, the model and the API key" in reason and "bug, please report" not in reason
    messages = [entry.user_message for entry in instance.all_logs(result.run_id)]
    assert not [message for message in messages if message.startswith("fr/table.pdf crashed") or "Traceback" in message]
    summary = summarize_pdf(paths.store(), "fr/table.pdf", STAGES, {result.run_id})
    assert summary.failure == f"table_summaries failed: {reason}", "the command line's summary says the same"
