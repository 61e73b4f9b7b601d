"""The one error family of solver_placement, the whole tree in one module.

Every failure caused by the input is a :class:`PlacementError` (a ``ValueError``), so callers can
catch a single type. Subclasses tell *which stage* refused the input; the message always names
the component, the offending text (segment, key or label) and the rule that was broken, in the
user's own words. A failure of the library itself is an :class:`InternalError`, deliberately not
a ``ValueError``: it is a bug to report, not bad input to fix.

```
PlacementError (ValueError)
  PlacementSyntaxError (+AssertionError)      the rank grammar
  PlacementConfigError (+AssertionError)      a value that is well formed but not acceptable
    NodeRankError (+IndexError)               a node rank outside the selected node groups
  InfeasiblePlacementError (+AssertionError)  proven impossible; .statements names the statements
  SolverTimeoutError                          no answer within the time limit
  VerificationError                           a placement breaks a rule of its spec
  LaunchError                                 Ray could not reserve, verify or start the plan
  VerlExportError                             a solved layout verl's config cannot state (export)
DispatchError (ValueError)    a worker-group call that cannot be split over its workers (not placement)
InternalError (RuntimeError)  a bug in solver_placement (e.g. a CP-SAT model it built is invalid)
```

Catching them from RLinf code: RLinf checks its placement rules with ``assert`` (so callers and
RLinf's own tests catch ``AssertionError``), raises ``ValueError`` for rank syntax and placement
modes, and ``IndexError`` for a node rank outside the selected node groups. So the errors that
stand for one of those rules carry the built-in type as a second base: the syntax, config and
infeasibility errors are also ``AssertionError`` (and, as every ``PlacementError``, a
``ValueError``), and :class:`NodeRankError` is also an ``IndexError``; ``except AssertionError``
around an RLinf placement call keeps working after the import is swapped. Their messages contain
RLinf's key phrase for the same rule ("Resource ranks must be unique", "must be on the same
node", ...) next to our own words. Timeouts, verification, launch and export failures have no RLinf
counterpart and stay plain ``PlacementError``.
"""

from __future__ import annotations

import reprlib
from collections.abc import Sequence
from dataclasses import dataclass


class PlacementError(ValueError):
    """Base class of every error raised on bad input or an impossible placement."""


class PlacementSyntaxError(PlacementError, AssertionError):
    """A rank expression or placement string does not follow the grammar."""


class PlacementConfigError(PlacementError, AssertionError):
    """A configuration value is well formed but not acceptable (unknown label, bad type, ...)."""


class NodeRankError(PlacementConfigError, IndexError):
    """A node rank outside the nodes of the selected node groups (RLinf raises ``IndexError``)."""


@dataclass(frozen=True)
class Statement:
    """One thing the user said, as the solver states it: a record, not only a sentence.

    ``component`` is the component whose config holds it ("" for what the cluster offers, e.g.
    the counting arithmetic), ``keys`` the config keys it rests on (``processes``,
    ``exclusive_with``, ...), ``rule`` the rule family that enforces it (``_solver/rules/``, or
    ``counting``), ``processes`` the first and last process rank it is about (None: all of them)
    and ``others`` the other components it names. A statement about some processes that says the
    same of each (``actor: process 3 (ranks [3, 4]) must have all its GPUs on one node``) keeps
    that in ``of_each``, so statements equal but for their processes merge on it. Front ends
    group conflicts by these fields and find the components to change from them, never by
    parsing ``text``.
    """

    text: str
    component: str = ""
    keys: tuple[str, ...] = ()
    rule: str = ""
    processes: tuple[int, int] | None = None
    others: tuple[str, ...] = ()
    of_each: str = ""

    def __str__(self) -> str:
        return self.text

    @property
    def named(self) -> tuple[str, ...]:
        """Every component the statement is about: its own first."""
        return tuple(dict.fromkeys(name for name in (self.component, *self.others) if name))


class InfeasiblePlacementError(PlacementError, AssertionError):
    """The solver proved that no placement satisfies the spec.

    ``statements`` are the user statements (:class:`Statement` records: component, config keys,
    rule, processes) that cannot all hold together; ``conflicts`` are their sentences, which the
    message lists.
    """

    def __init__(self, message: str, conflicts: Sequence[Statement | str] = ()) -> None:
        super().__init__(message)
        self.statements: tuple[Statement, ...] = tuple(c if isinstance(c, Statement) else Statement(c) for c in conflicts)
        self.conflicts: tuple[str, ...] = tuple(s.text for s in self.statements)


class SolverTimeoutError(PlacementError):
    """The solver hit its time limit before finding a placement or proving there is none."""


class VerificationError(PlacementError):
    """A placement violates a rule of its spec (raised by :func:`solver_placement.verify`)."""

    def __init__(self, violations: Sequence[str]) -> None:
        self.violations: tuple[str, ...] = tuple(violations)
        shown = "\n  - ".join(self.violations[:20])
        more = f"\n  ... and {len(self.violations) - 20} more" if len(self.violations) > 20 else ""
        super().__init__(f"{counted(len(self.violations), 'placement rule')} violated:\n  - {shown}{more}")


class LaunchError(PlacementError):
    """Ray could not reserve, verify or start what the plan asks for."""


class VerlExportError(PlacementError):
    """A solved layout verl's config cannot state (``export --to verl``): ``component`` is the
    component that breaks ``rule`` (one of ``verl_export.RULES``); the message says both and how."""

    def __init__(self, component: str, rule: str, message: str) -> None:
        super().__init__(message)
        self.component = component
        self.rule = rule


class DispatchError(ValueError):
    """A call the worker groups cannot dispatch (``Dispatch`` modes, ``Batch``, ``fuse``): a
    batch that does not split over the workers, arguments of the wrong shape, answers that do
    not match the workers. Not a :class:`PlacementError`: the placement is fine, the call is not."""


class InternalError(RuntimeError):
    """solver_placement itself failed (not the input): please report it with the config."""


#: How much of a user's value a message quotes: enough to recognise it, never the whole of a
#: 10 MB string or a 1,000-deep list (quoting those cost gigabytes and crashed the interpreter).
_QUOTE = reprlib.Repr()
_QUOTE.maxlevel, _QUOTE.maxstring, _QUOTE.maxother, _QUOTE.maxlong = 3, 80, 80, 60
_QUOTE.maxdict = _QUOTE.maxlist = _QUOTE.maxtuple = _QUOTE.maxset = 6


class WholeRepr:
    """A value of ours whose ``repr`` bounds itself (each part cut), so :func:`shown` quotes it whole:
    cutting its middle would drop what it says (an unresolved value's reason, the variable to set)."""

    __slots__ = ()


def shown(value: object) -> str:
    """``value`` quoted for an error message: a bounded ``repr`` that never raises.

    The one way to put a user's value into a message. Config values may come from someone else:
    a huge string or list is cut short, a deeply nested one is elided past three levels, an int
    beyond Python's 4,300-digit ``str`` limit is described by its size, and an object whose
    ``repr`` raises is named by its type.
    """
    if isinstance(value, int) and value.bit_length() > 200:
        return f"<an integer of about {int(value.bit_length() * 0.30103) + 1} digits>"
    try:
        return repr(value) if isinstance(value, WholeRepr) else _QUOTE.repr(value)
    except Exception:  # a user object's __repr__ may raise anything; the message must still be made
        return f"<unprintable {type(value).__name__}>"


def first_line(error: BaseException) -> str:
    """The first line of an error's message (a loader's, the OS's), bounded and escaped for a
    one-line error of ours; the error's type name when it says nothing."""
    lines = str(error).strip().splitlines()
    return shown(lines[0])[1:-1] if lines else type(error).__name__


def cut(text: str, limit: int = 80) -> str:
    """``text`` for a message, its middle elided past ``limit`` characters (a user's own
    quoting kept, so ``f'"{cut(text)}"'`` reads as before for a normal-sized text)."""
    if len(text) <= limit:
        return text
    half = (limit - 3) // 2
    return f"{text[:half]}...{text[-half:]}"


def counted(count: int, noun: str, plural: str = "") -> str:
    """``count`` and ``noun``, plural (``plural``, else ``noun`` + s) unless it is one (``1 GPU``,
    ``2 GPUs``): a message that says "1 components" or "2 node(s)" reads as a bug and hides the
    count it reports. The library's one way to put a count before a noun (with :func:`agreeing`)."""
    return f"{count} {agreeing(count, noun, plural)}"


def agreeing(count: int, noun: str, plural: str = "") -> str:
    """``noun`` as it reads for ``count`` items, without the count: ``node`` for one, ``nodes``
    (``plural``, else ``noun`` + s) otherwise; for a list that follows (``nodes 3, 5``)."""
    return noun if count == 1 else plural or f"{noun}s"


def with_context(error: PlacementError, where: str) -> PlacementError:
    """The same error (same type, same extra fields) with ``where: `` in front of its message.

    The one way to say which component, file or stage an error from a lower stage belongs to.
    """
    if error.args and isinstance(error.args[0], str):
        error.args = (f"{where}: {error.args[0]}", *error.args[1:])
    return error


def missing_extra(error: ModuleNotFoundError, package: str, problem: str, extra: str, kind: type[PlacementError]) -> PlacementError:
    """The error for an optional dependency that is not installed: ``problem``, then the command
    that installs the extra.

    ``error`` is re-raised when it is about another module: ``package`` is then installed but
    broken, and its own message says more than ours would.
    """
    if (error.name or "").partition(".")[0] != package:
        raise error
    return kind(f"{problem}: pip install 'solver_placement[{extra}]'")
