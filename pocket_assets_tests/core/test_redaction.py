"""`redact`: what an error text may keep of a request, and what it never keeps."""

from pocket_assets.core.redaction import has_credentials, is_local, redact, url_without_credentials

KEY = "sk-live-0123456789abcdef"


def test_the_known_key_is_masked_wherever_it_stands() -> None:
    assert redact(f"denied for {KEY}; retry with {KEY}x", [KEY]) == "denied for ***; retry with ***x"


def test_credentials_tokens_and_key_fields_are_masked_without_knowing_them() -> None:
    text = (
        "POST http://alice:hunter2secret@llm.internal/v1 failed; header Authorization: Bearer abcDEF123456789; "
        '{"api_key": "zzTop0987654321"} token=qwertyuiop123 and ghp_0123456789abcdefXYZ'
    )
    cleaned = redact(text)
    for secret in ("hunter2secret", "abcDEF123456789", "zzTop0987654321", "qwertyuiop123", "ghp_0123456789abcdefXYZ"):
        assert secret not in cleaned
    assert "http://***@llm.internal/v1" in cleaned and "Bearer ***" in cleaned


def test_ordinary_text_is_left_alone() -> None:
    text = "HTTP 500 Internal Server Error: upstream model crashed (page 4, table 2)"
    assert redact(text, ["abc"]) == text  # a value too short to be a key is not masked everywhere


def test_urls() -> None:
    assert url_without_credentials("https://u:p@host:8443/v1") == "https://***@host:8443/v1"
    assert url_without_credentials("https://host/v1") == "https://host/v1"
    assert has_credentials("http://u@host") and not has_credentials("http://host/a@b")
    assert is_local("http://localhost:11434/v1") and is_local("http://127.0.0.1/v1") and is_local("http://[::1]:8/")
    assert not is_local("http://llm.example.org/v1")
