"""Secrets never leave their variable: text about an endpoint is cleaned before anyone stores it.

An error from an LLM endpoint can carry what was sent to it: a server may echo the
`Authorization` header in a 401 page, and a base URL may hold `user:password@`. Such
text becomes a PDF's failure reason, which manifests, exports, run logs and the UI keep.
So every sentence built from a request or a reply passes through `redact` first, with
the key's value when it is known; the patterns catch the forms a key takes when it is not.
"""

from __future__ import annotations

import re
from typing import Iterable
from urllib.parse import urlsplit, urlunsplit

MASK = "***"
# The shortest value worth masking wherever it appears: a shorter "key" would mask ordinary words.
MIN_SECRET_CHARS = 6

_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s:@]*(?::[^/\s@]*)?@")
_AUTH_SCHEME = re.compile(r"(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/=-]{6,}")
_KEY_FIELD = re.compile(
    r"(?i)\b(api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password|authorization)"
    r"(\"?\s*[:=]\s*\"?)(?!bearer\b|basic\b)[^\s\"&,;}]+"
)
_SECRET_LOOKING = re.compile(r"\b(sk|pk|rk|xox[abpr]|gh[pousr])[-_][A-Za-z0-9_-]{8,}\b")


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every given secret, URL credentials, `Bearer …` tokens, `api_key=…` values and
    key-shaped words (`sk-…`) replaced by `***`."""
    for secret in sorted({s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    text = _URL_CREDENTIALS.sub(lambda match: f"{match['scheme']}{MASK}@", text)
    text = _AUTH_SCHEME.sub(lambda match: f"{match[1]}{match[2]}{MASK}", text)
    text = _KEY_FIELD.sub(lambda match: f"{match[1]}{match[2]}{MASK}", text)
    return _SECRET_LOOKING.sub(MASK, text)


def url_without_credentials(url: str) -> str:
    """The URL as it may be shown: `user:password@` replaced by `***@`."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=f"{MASK}@{parts.netloc.rsplit('@', 1)[1]}"))


def has_credentials(url: str) -> bool:
    return "@" in urlsplit(url).netloc


LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def is_local(url: str) -> bool:
    """Whether the URL's host is this machine (loopback), where plain http exposes nothing."""
    host = (urlsplit(url).hostname or "").lower()
    return host in LOCAL_HOSTS or host.endswith(".localhost") or host.startswith("127.")
