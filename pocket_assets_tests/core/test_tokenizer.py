import gzip
import json
from importlib import resources
from pathlib import Path

import pytest
from tokenizers import AddedToken, Tokenizer
from tokenizers.models import BPE

from pocket_assets.core.errors import TokenizerError
from pocket_assets.core.tokenizer import (
    compact_tokenizer_json,
    load_tokenizer,
    tokenizer_identity,
)


def test_vendored_gemma_tokenizer_counts_without_special_tokens() -> None:
    counter = load_tokenizer()
    assert counter.tokenizer.get_vocab_size() >= 262144  # 262,144 plus added special tokens
    assert counter.count("") == 0
    assert counter.count("Article 4.1 Le toucher-jouer.") == len(
        counter.tokenizer.encode("Article 4.1 Le toucher-jouer.", add_special_tokens=False).ids
    )
    assert counter.count_batch(["un", "deux mots"]) == [counter.count("un"), counter.count("deux mots")]


def test_a_tokenizer_json_file_or_model_folder_loads_offline(tmp_path: Path) -> None:
    data = resources.files("pocket_assets.core.data").joinpath("gemma3-tokenizer.json.gz").read_bytes()
    model_folder = tmp_path / "my-model"
    model_folder.mkdir()
    (model_folder / "tokenizer.json").write_bytes(gzip.decompress(data))
    from_folder = load_tokenizer(str(model_folder))
    assert from_folder.count("Bonjour le monde") == load_tokenizer().count("Bonjour le monde")


def test_unknown_tokenizer_is_a_clear_error_not_a_download() -> None:
    with pytest.raises(TokenizerError, match="nothing is downloaded"):
        load_tokenizer("no-such-org/no-such-model")
    with pytest.raises(TokenizerError):
        load_tokenizer.__wrapped__("/")  # a folder without tokenizer.json


def test_a_file_that_is_not_tokenizer_json_is_a_clear_error(tmp_path: Path) -> None:
    broken = tmp_path / "tokenizer.json"
    broken.write_text('{"model": ', encoding="utf-8")
    with pytest.raises(TokenizerError, match="not a Hugging Face tokenizer.json"):
        load_tokenizer.__wrapped__(str(broken))


def test_identity_follows_the_file_content_not_its_name(tmp_path: Path) -> None:
    data = gzip.decompress(resources.files("pocket_assets.core.data").joinpath("gemma3-tokenizer.json.gz").read_bytes())
    first = tmp_path / "a" / "tokenizer.json"
    first.parent.mkdir()
    first.write_bytes(data)
    moved = tmp_path / "b.json"
    moved.write_bytes(data)
    assert tokenizer_identity("gemma3") == "gemma3", "the vendored tokenizer keeps its fixed id"
    assert tokenizer_identity(str(first)) == tokenizer_identity(str(first.parent)) == tokenizer_identity(str(moved))
    assert tokenizer_identity(str(first)).startswith("blake3:")
    first.write_bytes(data + b"\n")
    assert tokenizer_identity(str(first)) != tokenizer_identity(str(moved)), "an edited file is another tokenizer"


def test_the_vendored_tokenizer_is_in_its_fastest_form() -> None:
    data = gzip.decompress(resources.files("pocket_assets.core.data").joinpath("gemma3-tokenizer.json.gz").read_bytes())
    assert compact_tokenizer_json(data) == data
    assert b'"merges":["' in data, "merges as strings, not pairs"


def _tiny_bpe(vocab: dict[str, int], merges: list[tuple[str, str]]) -> Tokenizer:
    tokenizer = Tokenizer(BPE(vocab, merges, unk_token="<unk>"))
    tokenizer.add_special_tokens([AddedToken("<bos>", normalized=False)])
    return tokenizer


def test_the_compact_form_is_the_same_tokenizer() -> None:
    vocab = {"<unk>": 0, "a": 1, "b": 2, "c": 3, "ab": 4, "abc": 5, "bc": 6}
    original = _tiny_bpe(vocab, [("a", "b"), ("ab", "c"), ("b", "c")])
    pretty = json.dumps(json.loads(original.to_str()), indent=2, ensure_ascii=False).encode("utf-8")
    compact = compact_tokenizer_json(pretty)
    assert b'"merges":["a b","ab c","b c"]' in compact and b"\n" not in compact and len(compact) < len(pretty)
    loaded = Tokenizer.from_buffer(compact)
    assert loaded.to_str() == original.to_str()
    for text in ("abc", "cab<bos>bc", "aabbcc", ""):
        assert loaded.encode(text).ids == original.encode(text).ids
        assert loaded.encode(text).offsets == original.encode(text).offsets
    assert compact_tokenizer_json(compact) == compact


def test_merges_of_tokens_with_a_space_keep_their_pairs() -> None:
    original = _tiny_bpe({"<unk>": 0, "a": 1, " ": 2, "a ": 3}, [("a", " ")])
    compact = compact_tokenizer_json(original.to_str().encode("utf-8"))
    assert b'"merges":[["a"," "]]' in compact
    assert Tokenizer.from_buffer(compact).encode("a a").ids == original.encode("a a").ids
