"""The named limits on untrusted input, public: read them, raise them for trusted input.

Every size, depth, count and memory bound the library checks before the work it bounds is a
field of :class:`Limits` (SECURITY.md lists them). :func:`configure` changes them for the whole
process, :func:`override` for a ``with`` block of the calling thread only (threads overriding at
once never see or keep each other's values), :func:`current` reads those in force.
"""

from solver_placement._limits import Limits, configure, current, override

__all__ = ["Limits", "configure", "current", "override"]
