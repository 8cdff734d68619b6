import dataclasses

import pytest

from pocket_assets.core.policy import ChunkPolicy, policy_from_environment


def test_policy_hash_is_stable_and_sensitive_to_every_field() -> None:
    policy = ChunkPolicy()
    assert policy.policy_hash == ChunkPolicy().policy_hash
    assert len(policy.policy_hash) == 16
    assert policy.code_version == f"pocket-hier-v4+{policy.policy_hash}"
    changed = {
        dataclasses.replace(policy, child_tokens=400).policy_hash,
        dataclasses.replace(policy, page_mode="span").policy_hash,
        dataclasses.replace(policy, tokenizer="other").policy_hash,
        dataclasses.replace(policy, chunker_version="pocket-hier-v2").policy_hash,
        dataclasses.replace(policy, context_header="none").policy_hash,
        dataclasses.replace(policy, context_header="title").policy_hash,
        dataclasses.replace(policy, context_max_tokens=24).policy_hash,
        dataclasses.replace(policy, max_tokens=256).policy_hash,
    }
    assert policy.policy_hash not in changed and len(changed) == 8


def test_environment_overrides_child_size_and_overlap() -> None:
    policy = policy_from_environment({"CHUNK_SIZE_TOKENS": "300", "CHUNK_OVERLAP_TOKENS": "40"})
    assert (policy.child_tokens, policy.child_overlap) == (300, 40)
    assert policy_from_environment({}) == ChunkPolicy()
    with pytest.raises(ValueError, match="CHUNK_SIZE_TOKENS"):
        policy_from_environment({"CHUNK_SIZE_TOKENS": "big"})


def test_inconsistent_policies_are_refused() -> None:
    with pytest.raises(ValueError, match="overlap"):
        ChunkPolicy(child_overlap=300)
    with pytest.raises(ValueError, match="page_mode"):
        ChunkPolicy(page_mode="pages")
    with pytest.raises(ValueError, match="context_header"):
        ChunkPolicy(context_header="section")
    with pytest.raises(ValueError, match="context_max_tokens"):
        ChunkPolicy(context_max_tokens=2)


def test_the_header_bound_is_at_most_a_quarter_of_the_cap() -> None:
    assert ChunkPolicy().header_tokens == 60
    assert ChunkPolicy(max_tokens=128).header_tokens == 32
    assert ChunkPolicy(context_header="none").header_tokens == 0
