"""Ctrl-C held back during a step of the embedded Ray, and its ``ray start`` record kept, with
real signals and a real record file (no Ray started: the subprocess runs of
``test_interrupted_launch`` cover the whole launch)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from solver_placement._ray_launch.ray_start_record import RecordKeeper
from solver_placement._ray_launch.uninterrupted import uninterrupted


@pytest.fixture
def default_handler() -> Iterator[None]:
    """Python's own SIGINT handler (raise KeyboardInterrupt), put back as found afterwards."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def test_one_ctrl_c_is_raised_once_the_step_is_done(default_handler: None) -> None:
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with uninterrupted():
            signal.raise_signal(signal.SIGINT)
            steps.append("finished after the Ctrl-C")
    assert steps == ["finished after the Ctrl-C"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_second_ctrl_c_interrupts_the_step_at_once(default_handler: None) -> None:
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with uninterrupted():
            signal.raise_signal(signal.SIGINT)
            steps.append("after the first")
            signal.raise_signal(signal.SIGINT)
            steps.append("after the second")
    assert steps == ["after the first"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_held_ctrl_c_wins_over_the_steps_own_error(default_handler: None) -> None:
    with pytest.raises(KeyboardInterrupt) as raised:
        with uninterrupted():
            signal.raise_signal(signal.SIGINT)
            raise RuntimeError("the step failed")
    assert isinstance(raised.value.__context__, RuntimeError)


def test_without_ctrl_c_nothing_changes_and_an_ignored_one_stays_ignored(default_handler: None) -> None:
    with uninterrupted():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with uninterrupted():
        signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN


def _record(tmp_path: Path) -> Path:
    return tmp_path / "ray" / "ray_current_cluster"


def test_the_users_record_is_put_back_over_the_embedded_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    _record(tmp_path).parent.mkdir()
    _record(tmp_path).write_text("10.0.0.1:6379")
    keeper = RecordKeeper()
    _record(tmp_path).write_text("192.0.2.2:40000")  # what Ray's test cluster writes for its head
    keeper.put_back("192.0.2.2:40000")
    assert _record(tmp_path).read_text() == "10.0.0.1:6379"


def test_no_record_before_means_none_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    keeper = RecordKeeper()
    _record(tmp_path).parent.mkdir()
    _record(tmp_path).write_text("192.0.2.2:40000")
    keeper.put_back("192.0.2.2:40000")
    assert not _record(tmp_path).exists()


def test_a_record_written_since_by_someone_else_stays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    keeper = RecordKeeper()
    _record(tmp_path).parent.mkdir()
    _record(tmp_path).write_text("10.0.0.2:6379")  # a `ray start` in between
    keeper.put_back("192.0.2.2:40000")
    assert _record(tmp_path).read_text() == "10.0.0.2:6379"
    keeper.put_back(None)  # the head never started: nothing of ours to undo
    assert _record(tmp_path).read_text() == "10.0.0.2:6379"
