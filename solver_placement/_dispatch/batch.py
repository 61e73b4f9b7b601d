"""A batch the ``*_PROTO`` dispatch modes split and join: named columns of equal length, no torch.

verl's ``DataProto`` holds tensors, numpy arrays and ``meta_info``; its dispatch splits a batch
along the first axis into equal chunks and concatenates the workers' answers back. A
:class:`Batch` keeps those semantics over numpy arrays and lists, so a placement can be driven
end to end without torch: :meth:`Batch.chunk` refuses a length that does not divide (verl's "only
support equal chunk"), and a batch built with ``auto_padding=True`` is padded by repeating its
last row, the rows dropped again after collection (verl's auto padding).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np

from solver_placement._errors import DispatchError, counted

#: One column: rows along the first axis.
Column: TypeAlias = np.ndarray | list[Any]


@dataclass(frozen=True)
class Batch(Mapping[str, Column]):
    """Columns of equal length (rows along the first axis), plus ``meta_info`` every chunk keeps.

    ``auto_padding``: the dispatch may pad the batch to a multiple of the worker count (verl's
    ``DataProto`` auto padding); without it an uneven split is an error.
    """

    columns: Mapping[str, Column]
    meta_info: Mapping[str, Any] = field(default_factory=dict)
    auto_padding: bool = False

    def __post_init__(self) -> None:
        lengths = {name: len(column) for name, column in self.columns.items()}
        bad = [name for name, column in self.columns.items() if not isinstance(column, (np.ndarray, list))]
        if not lengths or bad:
            raise DispatchError(f"a batch needs at least one column, each a numpy array or a list (not: {', '.join(bad) or 'no columns'})")
        if len(set(lengths.values())) > 1:
            raise DispatchError(f"batch columns differ in length: {lengths}; every column holds one entry per row")

    def __getitem__(self, name: str) -> Column:
        return self.columns[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.columns)

    def __len__(self) -> int:
        """Rows, not columns: the length the dispatch splits (verl's ``len(DataProto)``)."""
        return len(next(iter(self.columns.values())))

    def chunk(self, chunks: int) -> list[Batch]:
        """``chunks`` equal consecutive slices, each with this batch's ``meta_info``."""
        if len(self) % chunks:
            raise DispatchError(
                f"a batch of {counted(len(self), 'row')} does not split into {chunks} equal chunks (only equal chunks are supported; "
                "build it with auto_padding=True to pad it with copies of its last row in DP_COMPUTE_PROTO)"
            )
        size = len(self) // chunks
        return [self.rows(start, start + size) for start in range(0, len(self), size)] if size else [self.rows(0, 0)] * chunks

    def rows(self, start: int, stop: int) -> Batch:
        """Rows ``start`` to ``stop`` (exclusive), same meta_info and padding flag."""
        return Batch({name: column[start:stop] for name, column in self.columns.items()}, self.meta_info, self.auto_padding)

    def padded(self, extra: int) -> Batch:
        """This batch with its last row repeated ``extra`` times (verl's default padding candidate)."""
        last = self.rows(len(self) - 1, len(self))
        return Batch.concat([self, *[last] * extra]) if extra else self

    @staticmethod
    def concat(parts: Sequence[Mapping[str, Column]]) -> Batch:
        """Join batches (or plain column mappings) row-wise; ``meta_info`` is the first part's."""
        batches = [as_batch(part) for part in parts]
        if not batches or any(set(b.columns) != set(batches[0].columns) for b in batches):
            raise DispatchError(f"cannot join batches with different columns: {[sorted(b.columns) for b in batches] or 'none given'}")
        joined = {name: _join([b.columns[name] for b in batches]) for name in batches[0].columns}
        return Batch(joined, batches[0].meta_info, batches[0].auto_padding)


def as_batch(value: Any) -> Batch:
    """A :class:`Batch` as is, a plain mapping of columns as a batch; anything else is refused."""
    if isinstance(value, Batch):
        return value
    if isinstance(value, Mapping):
        return Batch(dict(value))
    raise DispatchError(f"the *_PROTO dispatch modes split batches (a Batch or a mapping of columns), not {type(value).__name__}")


def _join(columns: list[Column]) -> Column:
    if all(isinstance(column, np.ndarray) for column in columns):
        return np.concatenate(columns)
    return [row for column in columns for row in column]
