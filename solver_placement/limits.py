"""The named limits on untrusted input, public: read them, raise them for trusted input.

Every size, depth, count and memory bound the library checks before the work it bounds is a
field of :class:`Limits` (SECURITY.md lists them). They are process-wide: :func:`configure`
changes them, :func:`override` changes them for a ``with`` block, :func:`current` reads them.
"""

from solver_placement._limits import Limits, configure, current, override

__all__ = ["Limits", "configure", "current", "override"]
