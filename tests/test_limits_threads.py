"""``limits.override`` from several threads at once (issue 35 item 8): each thread sees its own
block's values, and whatever order the blocks end in, the process keeps its own limits."""

from __future__ import annotations

import threading

import pytest

from solver_placement import PlacementConfigError, limits


def _overlapping(first_exits_first: bool) -> list[tuple[str, int, int]]:
    """Two threads whose override blocks overlap: A enters, B enters, then one of them leaves
    first; each records (thread, max_nodes, max_depth) as it sees them inside its block."""
    seen: list[tuple[str, int, int]] = []
    both_in = threading.Barrier(2)
    a_left, b_left = threading.Event(), threading.Event()

    def run(name: str, changes: dict[str, int], wait_for: threading.Event | None, done: threading.Event) -> None:
        with limits.override(**changes):
            both_in.wait(timeout=10)
            if wait_for is not None:
                wait_for.wait(timeout=10)
            seen.append((name, limits.current().max_nodes, limits.current().max_depth))
        done.set()

    a = threading.Thread(target=run, args=("a", {"max_nodes": 7}, None if first_exits_first else b_left, a_left))
    b = threading.Thread(target=run, args=("b", {"max_depth": 9}, a_left if first_exits_first else None, b_left))
    for thread in (a, b):
        thread.start()
    for thread in (a, b):
        thread.join(timeout=20)
    return sorted(seen)


@pytest.mark.parametrize("first_exits_first", [True, False], ids=["a-leaves-first", "b-leaves-first"])
def test_two_threads_overriding_at_once_see_their_own_values_and_leave_the_process_as_it_was(first_exits_first: bool) -> None:
    before = limits.current()
    seen = _overlapping(first_exits_first)
    assert seen == [("a", 7, before.max_depth), ("b", before.max_nodes, 9)]
    assert limits.current() == before


def test_configure_changes_the_process_and_an_override_block_of_another_thread_keeps_its_values() -> None:
    before = limits.current()
    inside, configured = threading.Event(), threading.Event()
    seen: list[int] = []

    def run() -> None:
        with limits.override(max_nodes=5):
            inside.set()
            configured.wait(timeout=10)
            seen.append(limits.current().max_nodes)
        seen.append(limits.current().max_nodes)

    thread = threading.Thread(target=run)
    thread.start()
    inside.wait(timeout=10)
    previous = limits.configure(max_nodes=11)
    try:
        configured.set()
        thread.join(timeout=20)
        assert seen == [5, 11] and limits.current().max_nodes == 11
    finally:
        limits.configure(max_nodes=previous.max_nodes)
    assert limits.current() == before


def test_an_override_that_raises_or_names_no_limit_leaves_nothing_behind() -> None:
    before = limits.current()
    with pytest.raises(PlacementConfigError, match="unknown limit 'max_nope'"), limits.override(max_nope=1):
        pass
    with pytest.raises(KeyError), limits.override(max_nodes=3):
        assert limits.current().max_nodes == 3
        raise KeyError("inside")
    assert limits.current() == before
