import dataclasses

import pytest

from pocket_assets.core.device import PRESETS, DeviceProfile
from pocket_assets.core.policy import (
    SEARCHABLE_MAX_TOKENS,
    SIZES_BY_WINDOW,
    ChunkPolicy,
    sizes_for_window,
    sizes_from_environment,
)


def test_policy_hash_is_stable_and_sensitive_to_every_field() -> None:
    policy = ChunkPolicy()
    assert policy.policy_hash == ChunkPolicy().policy_hash
    assert len(policy.policy_hash) == 16
    assert policy.code_version == f"pocket-hier-v5+{policy.policy_hash}"
    changed = {
        dataclasses.replace(policy, child_tokens=400).policy_hash,
        dataclasses.replace(policy, page_mode="span").policy_hash,
        dataclasses.replace(policy, tokenizer="other").policy_hash,
        dataclasses.replace(policy, chunker_version="pocket-hier-v2").policy_hash,
        dataclasses.replace(policy, context_header="none").policy_hash,
        dataclasses.replace(policy, context_header="title").policy_hash,
        dataclasses.replace(policy, context_max_tokens=24).policy_hash,
        dataclasses.replace(policy, device=DeviceProfile(embed_max_tokens=256)).policy_hash,
        dataclasses.replace(policy, device=DeviceProfile(document_prompt="")).policy_hash,
        dataclasses.replace(policy, device=DeviceProfile(special_tokens=1)).policy_hash,
        dataclasses.replace(policy, device=DeviceProfile(llm_context_tokens=1024)).policy_hash,
        dataclasses.replace(policy, device=DeviceProfile(top_k=5)).policy_hash,
        dataclasses.replace(policy, device=DeviceProfile(question_tokens=128)).policy_hash,
    }
    assert policy.policy_hash not in changed and len(changed) == 13


def test_the_environment_sets_child_size_overlap_and_the_window() -> None:
    environ = {"CHUNK_SIZE_TOKENS": "300", "CHUNK_OVERLAP_TOKENS": " 40 ", "EMBED_MAX_TOKENS": "256", "OTHER": "1"}
    assert sizes_from_environment(environ) == {"child_tokens": 300, "child_overlap": 40, "embed_max_tokens": 256}
    assert sizes_from_environment({"EMBED_MAX_TOKENS": ""}) == {}
    for variable in ("CHUNK_SIZE_TOKENS", "EMBED_MAX_TOKENS"):
        with pytest.raises(ValueError, match=variable):
            sizes_from_environment({variable: "big"})


def test_sizes_follow_the_window_unless_given() -> None:
    assert ChunkPolicy() == ChunkPolicy.for_device(DeviceProfile())
    for name, device in PRESETS.items():
        policy = ChunkPolicy.for_device(device)
        sizes = SIZES_BY_WINDOW[device.embed_max_tokens]
        assert (policy.child_tokens, policy.child_overlap, policy.context_max_tokens) == (
            sizes.child_tokens,
            sizes.child_overlap,
            sizes.context_max_tokens,
        ), name
        assert policy.child_tokens <= SEARCHABLE_MAX_TOKENS
    given = ChunkPolicy.for_device(PRESETS["embeddinggemma-256"], child_tokens=160, context_max_tokens=20)
    assert (given.child_tokens, given.child_overlap, given.context_max_tokens) == (
        160,
        SIZES_BY_WINDOW[256].child_overlap,
        20,
    )
    # A window between presets takes the sizes of the largest preset window below it; below them all, the smallest's.
    assert sizes_for_window(700) == SIZES_BY_WINDOW[512] and sizes_for_window(128) == SIZES_BY_WINDOW[256]


def test_inconsistent_policies_are_refused() -> None:
    with pytest.raises(ValueError, match="overlap"):
        ChunkPolicy(child_overlap=300)
    with pytest.raises(ValueError, match="page_mode"):
        ChunkPolicy(page_mode="pages")
    with pytest.raises(ValueError, match="context_header"):
        ChunkPolicy(context_header="section")
    with pytest.raises(ValueError, match="context_max_tokens"):
        ChunkPolicy(context_max_tokens=2)
    with pytest.raises(ValueError, match="at most 512"):
        ChunkPolicy(child_tokens=600, parent_tokens=1024)


def test_the_header_bound_is_at_most_a_quarter_of_the_window() -> None:
    assert ChunkPolicy().header_tokens == 60
    assert ChunkPolicy(device=DeviceProfile(embed_max_tokens=128)).header_tokens == 32
    assert ChunkPolicy(context_header="none").header_tokens == 0
