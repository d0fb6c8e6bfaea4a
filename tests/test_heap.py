"""The server's garbage-collection policy (tile_lsp.server.heap)."""

from __future__ import annotations

import gc

from tile_lsp.server.heap import HeapPolicy, configure_collector


def test_a_long_analysis_asks_for_a_collection_at_once():
    policy = HeapPolicy(long_s=0.5, every=3, idle_s=0.0)
    assert policy.after_analysis(2.0) is True
    assert policy.after_analysis(0.01) is False


def test_a_collection_is_due_after_enough_analyses_once_idle():
    policy = HeapPolicy(long_s=10.0, every=3, idle_s=3600.0)
    for _ in range(3):
        policy.after_analysis(0.01)
    assert not policy.idle_collection_due()  # not idle long enough
    policy.idle_s = 0.0
    assert policy.idle_collection_due()
    try:
        policy.collect()
        assert gc.get_freeze_count() > 0 and policy.since_collect == 0 and policy.collections == 1
        assert not policy.idle_collection_due()
    finally:
        gc.unfreeze()


def test_the_server_leaves_collections_to_its_policy():
    was = gc.isenabled()
    try:
        gc.enable()
        configure_collector()
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


def test_young_objects_are_collected_at_once_only_when_very_many_wait():
    was = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        policy = HeapPolicy(young_limit=50_000)
        kept = [[n] for n in range(60_000)]  # tracked objects, alive
        assert policy.young_collection_now()
        policy.collect_young()
        assert gc.get_count()[0] < 1_000 and not policy.young_collection_now()
        assert len(kept) == 60_000
    finally:
        if was:
            gc.enable()
