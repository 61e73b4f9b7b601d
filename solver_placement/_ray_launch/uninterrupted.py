"""Ctrl-C held back while the embedded Ray starts or stops a node, connects or disconnects.

A ``KeyboardInterrupt`` raised inside one of those Ray calls stops it half way: a node whose
processes started but whose ``Node`` object was never returned (nothing can stop it but the
exit of this process), or a driver whose core worker is half torn down when Ray's own ``atexit``
hook runs ``ray.shutdown`` on it again. Inside :func:`uninterrupted` the first Ctrl-C is
remembered and raised as soon as the step is done, so every step either happens whole or not at
all and the cleanup that follows the interrupt finds a consistent state. A second Ctrl-C raises
at once: someone who presses it twice means it, even if a step then stays half done.
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
