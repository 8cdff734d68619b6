"""The cyclic collector paused over extraction: off inside, restored after (also after an error), and
extraction leaves no cycles behind for it to find."""

from __future__ import annotations

import gc

import pytest

from pocket_assets.core.cyclic_gc import loaded_objects_frozen, paused_cyclic_gc
from pocket_assets.core.extract import extract_pages
from pocket_assets_tests.pdf_factory import SAMPLE_RAW


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collectors_state_is_restored_after_the_pause_even_after_an_error(enabled: bool) -> None:
    (gc.enable if enabled else gc.disable)()
    try:
        with pytest.raises(ValueError), paused_cyclic_gc():
            assert not gc.isenabled()
            with paused_cyclic_gc():  # nested: the outer pause holds
                pass
            assert not gc.isenabled()
            raise ValueError("a page that cannot be read")
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_extraction_leaves_the_collector_on_and_no_cycles_to_collect() -> None:
    path = SAMPLE_RAW / "intl" / "R-data.pdf"
    extract_pages(path)  # first use: imports and caches of their own
    gc.collect()
    gc.disable()
    try:
        pages = extract_pages(path)
        assert not gc.isenabled(), "a caller's collector, off, stays off"
        assert len(pages) == 41 and gc.collect() == 0
    finally:
        gc.enable()
    extract_pages(path)
    assert gc.isenabled()


def test_loaded_objects_are_out_of_full_collections_inside_and_back_after_even_after_an_error() -> None:
    class Loaded:
        pass

    loaded = Loaded()
    loaded.self = loaded  # a cycle the collector would walk
    gc.collect()
    assert gc.get_freeze_count() == 0
    with pytest.raises(ValueError), loaded_objects_frozen():
        assert gc.get_freeze_count() > 0 and gc.is_tracked(loaded)
        made_inside = Loaded()
        made_inside.self = made_inside
        del made_inside
        assert gc.collect() > 0, "what the block made is still collected"
        raise ValueError("a step that fails")
    assert gc.get_freeze_count() == 0
    del loaded
    assert gc.collect() > 0, "the frozen cycle is collectable again"
