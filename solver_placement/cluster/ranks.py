"""The rank-range grammar shared by placement strings and node-group configs.

A rank expression is ``a``, ``a-b`` (inclusive) or ``all`` (any case, only where the set of
available ranks is known); a rank *list* joins expressions with commas (``"0-3,5"``) or is given
as an int or a YAML list. Ranges are kept as ``(start, stop)`` pairs and only materialised with
numpy once they are known to be of a sane size, so ``0-999999999`` fails before any allocation.

A rank list names a *set* (of nodes), as RLinf's ``parse_rank_config`` reads it: empty pieces
from a stray comma are skipped and overlapping pieces (``"0-3,2-5"``) are merged. Messages carry
RLinf's phrase for the same rule ("Invalid rank format", "must be less than or equal to end
rank", "must be within the available ranks").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from solver_placement.errors import PlacementConfigError, PlacementSyntaxError

#: Largest rank (or count) accepted anywhere; guards memory before arrays are built.
MAX_RANK = 10_000_000

_RANGE = re.compile(r"^\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?$")  # ASCII digits only


@dataclass(frozen=True)
class RankRange:
    """An inclusive run of consecutive ranks ``first..last``."""

    first: int
    last: int

    def __len__(self) -> int:
        return self.last - self.first + 1

    def to_array(self) -> np.ndarray:
        return np.arange(self.first, self.last + 1, dtype=np.int64)

    def __str__(self) -> str:
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"


def format_ranks(ranks: Iterable[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2,5"``: a rank set written in the grammar :func:`parse_rank_list` reads.

    The one formatter for rank sets, so messages and figures show ranks the way users type them
    (order and duplicates dropped). An empty set reads ``"none"``, which fits the sentences it
    lands in ("uses GPUs none").
    """
    runs: list[RankRange] = []
    for rank in sorted({int(rank) for rank in ranks}):
        if runs and rank == runs[-1].last + 1:
            runs[-1] = RankRange(runs[-1].first, rank)
        else:
            runs.append(RankRange(rank, rank))
    return ",".join(str(run) for run in runs) or "none"


def is_all(text: Any) -> bool:
    """``all`` in any case selects every available rank."""
    return isinstance(text, str) and text.strip().lower() == "all"


def parse_range(text: str, what: str, where: str) -> RankRange:
    """Parse one ``a`` or ``a-b`` expression; ``where`` prefixes every error message."""
    match = _RANGE.match(text)
    if match is None:
        raise PlacementSyntaxError(
            f'{where}: {what} "{text.strip()}" is not a rank range; expected "a", "a-b" or "all" (Invalid rank format)'
        )
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) is not None else first
    if last < first:
        raise PlacementSyntaxError(
            f'{where}: {what} "{text.strip()}" runs backwards; the start must not exceed the end '
            f"(Start rank {first} must be less than or equal to end rank {last})"
        )
    if last > MAX_RANK:
        raise PlacementConfigError(
            f'{where}: {what} "{text.strip()}" exceeds the largest supported rank {MAX_RANK}'
        )
    return RankRange(first, last)


def parse_rank_list(value: Any, what: str, where: str, available: int | None = None) -> np.ndarray:
    """Parse a rank list: ``"0-3,5"``, an int, a (YAML) list of ints/ranges, or ``all``.

    The ranks are returned sorted and unique (a rank named twice is the same rank). ``available``
    bounds the ranks (and enables ``all``); out-of-range ranks are reported with the available
    range.
    """
    pieces = _split_pieces(value, what, where)
    if len(pieces) == 1 and is_all(pieces[0]):
        if available is None:
            raise PlacementSyntaxError(f'{where}: {what} cannot be "all" here')
        return np.arange(available, dtype=np.int64)
    ranges = [parse_range(piece, what, where) for piece in pieces]
    if not ranges:
        raise PlacementConfigError(f'{where}: {what} "{value}" selects no ranks')
    if available is not None:
        for rank_range in ranges:
            check_in_bounds(rank_range, available, what, where)
    return np.unique(np.concatenate([r.to_array() for r in ranges]))


def check_in_bounds(rank_range: RankRange, available: int, what: str, where: str) -> None:
    """Raise if ``rank_range`` is not inside ``0..available-1``."""
    if rank_range.last >= available:
        limit = "there are none" if available == 0 else f"valid ranks are 0-{available - 1}"
        raise PlacementConfigError(
            f'{where}: {what} "{rank_range}" is out of range; {limit} (ranks must be within the available ranks)'
        )


def _split_pieces(value: Any, what: str, where: str) -> list[str]:
    if isinstance(value, bool):
        raise PlacementConfigError(f"{where}: {what} must be ranks, not a boolean ({value})")
    if isinstance(value, int):
        return [str(value)]
    if isinstance(value, str):
        return [piece for piece in value.split(",") if piece.strip()]
    if isinstance(value, Sequence):
        pieces: list[str] = []
        for item in value:
            pieces.extend(_split_pieces(item, what, where))
        return pieces
    raise PlacementConfigError(
        f"{where}: {what} must be a rank string, an int or a list, not {type(value).__name__}"
    )
