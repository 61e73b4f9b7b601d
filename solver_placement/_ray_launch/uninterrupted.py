"""Ctrl-C held back while the embedded Ray starts or stops a node, connects or disconnects.

A ``KeyboardInterrupt`` raised inside one of those Ray calls stops it half way, and what is left
breaks the teardown. Reproduced on Ray 2.60: Ctrl-C inside ``ray.init`` leaves a driver that
``ray.is_initialized()`` denies, so the teardown skips ``ray.shutdown``, while the head still
counts it as connected, so removing the head fails ("Removing a node that is connected to this
Ray client is not allowed"); at exit the nodes' ``atexit`` hooks (``ray/_private/node.py:635``),
registered after Ray's own ``ray.shutdown`` hook (``ray/_private/worker.py:2168``, made at
``import ray``; Ray 2.60.0, commit b7f4259) and so run before it, kill the raylets and the GCS
under the live core worker, and the process dies of a segmentation fault (status 139) instead of
reporting the interrupt. Likewise a node interrupted while it starts has processes but no ``Node``
object to stop them by. Inside :func:`uninterrupted` the first Ctrl-C is remembered and raised
as soon as the step is done, so each step happens whole and the cleanup after the interrupt finds
a consistent state. A second Ctrl-C raises at once: someone who presses it twice means it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any


@contextmanager
def uninterrupted() -> Iterator[None]:
    """Run the block with Ctrl-C (SIGINT) deferred to its end, then act on it as the handler in
    place before would have (raise ``KeyboardInterrupt``, by default).

    Only the main thread can set signal handlers (and only it runs Python's SIGINT handler), so in
    another thread, or under a handler installed outside Python, the block runs as it is.
    """
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or previous is None:  # None: set outside Python, cannot be put back
        yield
        return
    received: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        if len(received) > 1:  # pressed again: give the old handler back and interrupt now
            signal.signal(signal.SIGINT, previous)
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:  # a held Ctrl-C also wins over an error of the block: the user asked to stop
        if len(received) <= 1:
            signal.signal(signal.SIGINT, previous)
        if len(received) == 1:
            _act_as_before(previous)


def _act_as_before(previous: Callable[[int, FrameType | None], Any] | int) -> None:
    """Deliver the held Ctrl-C as the previous handler would have."""
    if previous == signal.SIG_DFL:
        signal.raise_signal(signal.SIGINT)  # the default: the process ends by the signal
    elif callable(previous):
        previous(signal.SIGINT, None)
    # else SIG_IGN: Ctrl-C was meant to be ignored
