"""Secrets never leave their variable: the summarizer resource sends only what it is allowed to send."""

import pytest

from pocket_assets.core.tokenizer import load_tokenizer
from pocket_assets.defs.resources import SummarizerResource


def test_api_key_env_cannot_name_any_other_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_CLOUD_SECRET", "s3cr3t-value-never-sent")
    resource = SummarizerResource(kind="llm", model="m", api_key_env="SOME_CLOUD_SECRET")
    with pytest.raises(ValueError, match="POCKET_ASSETS_LLM_") as raised:
        resource.summarizer(load_tokenizer(), 50)
    assert "s3cr3t" not in str(raised.value)


def test_the_summarizer_setting_never_holds_url_credentials() -> None:
    resource = SummarizerResource(kind="llm", model="m", base_url="https://user:pa55word-xyz@llm.example.org/v1")
    assert "pa55word" not in repr(resource.setting())
