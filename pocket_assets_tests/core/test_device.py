"""The device profile: presets, what its embedder reads of a line, what its LLM must hold."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pocket_assets.core.device import (
    DEFAULT_PRESET,
    EMBEDDINGGEMMA_DOCUMENT_PROMPT,
    PRESETS,
    DeviceProfile,
    device_profile,
    llm_overflow,
    read_by_embedder,
)
from pocket_assets.core.tokenizer import load_tokenizer
from pocket_assets_tests.core.test_chunker_properties import SETTINGS, TRICKY


def test_presets_are_the_litert_embeddinggemma_windows_with_room_for_three_lines_and_a_question() -> None:
    assert sorted(PRESETS) == [f"embeddinggemma-{window}" for window in (1024, 2048, 256, 512)]
    assert PRESETS[DEFAULT_PRESET] == DeviceProfile()
    for name, device in PRESETS.items():
        assert name == f"embeddinggemma-{device.embed_max_tokens}"
        assert device.document_prompt == EMBEDDINGGEMMA_DOCUMENT_PROMPT and device.special_tokens == 2
        # Three lines at their longest and the question budget fit the LLM.
        assert device.top_k * (device.embed_max_tokens - device.special_tokens) + device.question_tokens <= (
            device.llm_context_tokens
        )
    assert PRESETS["embeddinggemma-256"].llm_context_tokens == 1024  # the first users' phone


def test_a_preset_with_fields_replaced() -> None:
    assert device_profile() == PRESETS[DEFAULT_PRESET]
    assert device_profile("embeddinggemma-256", embed_max_tokens=None) == PRESETS["embeddinggemma-256"]
    changed = device_profile("embeddinggemma-256", embed_max_tokens=300, top_k=5)
    assert (changed.embed_max_tokens, changed.top_k, changed.llm_context_tokens) == (300, 5, 1024)
    with pytest.raises(ValueError, match="embeddinggemma-256"):
        device_profile("gecko-256")


def test_inconsistent_profiles_are_refused() -> None:
    with pytest.raises(ValueError, match="embed_max_tokens"):
        DeviceProfile(embed_max_tokens=16)
    with pytest.raises(ValueError, match="top_k"):
        DeviceProfile(top_k=0)
    with pytest.raises(ValueError, match="no room is left"):
        DeviceProfile(llm_context_tokens=256, question_tokens=256)


@SETTINGS
@given(st.lists(TRICKY, min_size=1, max_size=6), st.integers(32, 48))
def test_the_embedder_reads_the_start_of_a_line_up_to_its_window(texts, window):
    counter = load_tokenizer()
    device = DeviceProfile(embed_max_tokens=window)
    room = window - device.special_tokens
    lines = [EMBEDDINGGEMMA_DOCUMENT_PROMPT + text * 3 for text in texts]
    for line, read in zip(lines, read_by_embedder(lines, device, counter)):
        assert line.startswith(read) and counter.count(read) <= room
        if counter.count(line) <= room:
            assert read == line
        else:
            assert counter.count(read) >= room - 2  # cut at a token's end, not short of it


def test_the_llm_holds_the_top_k_longest_lines_and_the_question() -> None:
    device = DeviceProfile(embed_max_tokens=256, llm_context_tokens=1024, top_k=3, question_tokens=256)
    fitting = [("a", 256), ("b", 200), ("c", 256), ("d", 256), ("e", 10)]
    assert llm_overflow(fitting, device) is None  # 3 x 254 + 256 = 1018
    overflow = llm_overflow([*fitting, ("f", 270)], device)
    assert overflow is not None
    assert (overflow.line_ids, overflow.line_tokens, overflow.needed_tokens) == (("f", "d", "c"), 776, 1032)
    message = overflow.message(device, "fr")
    for setting in ("llm_context_tokens", "top_k", "EMBED_MAX_TOKENS", "1032"):
        assert setting in message
    assert llm_overflow([], device) is None
