"""The writer's memory of page ids (govsi.store.pageids): only committed ids are known, the
least recently used are forgotten first, and a failed transaction leaves nothing behind."""

from __future__ import annotations

from govsi.store.pageids import PageIds


def test_ids_are_known_only_once_their_transaction_commits() -> None:
    ids = PageIds(10)
    ids.stage({"a": 1, "b": 2})
    assert ids.known(["a", "b"]) == {}
    ids.commit()
    assert ids.known(["a", "b", "c"]) == {"a": 1, "b": 2}


def test_a_rolled_back_transaction_leaves_nothing() -> None:
    ids = PageIds(10)
    ids.stage({"a": 1})
    ids.commit()
    ids.stage({"b": 2})
    ids.rollback()
    ids.commit()
    assert ids.known(["a", "b"]) == {"a": 1}


def test_the_least_recently_used_are_forgotten_first() -> None:
    ids = PageIds(3)
    ids.stage({"a": 1, "b": 2, "c": 3})
    ids.commit()
    assert ids.known(["a"]) == {"a": 1}  # a is now the most recent
    ids.stage({"d": 4})
    ids.commit()
    assert len(ids) == 3
    assert ids.known(["a", "b", "c", "d"]) == {"a": 1, "c": 3, "d": 4}


def test_capacity_zero_remembers_nothing() -> None:
    ids = PageIds(0)
    ids.stage({"a": 1})
    ids.commit()
    assert ids.known(["a"]) == {} and len(ids) == 0


def test_what_it_holds_does_not_grow_with_the_urls_length() -> None:
    import gc
    import tracemalloc

    def held(length: int) -> int:
        tracemalloc.start()
        urls = [f"https://www.gov.si/{'x' * length}/{i}" for i in range(2000)]
        ids = PageIds(2000)
        ids.stage({url: i for i, url in enumerate(urls)})
        ids.commit()
        del urls
        gc.collect()
        size = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        assert len(ids) == 2000
        return size

    # A server's URLs up to MAX_URL_LENGTH cost what short ones do.
    assert held(2000) < 1.5 * held(40)
