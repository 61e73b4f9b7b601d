"""Numbers written as text, read within a bound before Python's ``int`` sees them.

``str.isdigit`` is true of ``'²'`` and ``'٣'``, which ``int`` refuses or reads as digits no config
means, and ``int`` of 5,000 digits raises Python's own ``ValueError`` (its 4,300-digit limit): so
an index in an override, a rank in a component's name or a NUMA node id in a key is read here,
ASCII digits only, its length measured against the bound before it is converted. Callers turn
``None`` into a refusal in their own words (the key and the bound).
"""

from __future__ import annotations


def decimal(text: str, maximum: int, *, canonical: bool = False) -> int | None:
    """The integer 0..``maximum`` that ``text`` writes in ASCII digits, else None; ``canonical``
    also refuses leading zeros (a name's rank is ``3``, never ``03``, as verl writes it)."""
    if not text or not text.isascii() or not text.isdigit():
        return None
    digits = text.lstrip("0") or "0"
    if (canonical and digits != text) or len(digits) > len(str(maximum)):
        return None
    value = int(digits)
    return value if value <= maximum else None
