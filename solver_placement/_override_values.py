"""The value of a Hydra override, read by Hydra's own grammar (hydra-core 1.3,
``hydra/grammar/OverrideLexer.g4`` and ``OverrideParser.g4``), without Hydra installed.

RLinf's entry scripts are Hydra apps, so ``actor.model.tensor_model_parallel_size=2`` means what
Hydra reads, and Hydra does not read YAML: ``1:2`` is the string ``'1:2'`` (YAML 1.1: the
integer 62), ``yes`` and ``0x10`` stay strings, ``1e3`` and ``inf`` are floats, ``{a:1}`` is
``{'a': 1}``, an unquoted ``0-3,4-7`` is a sweep over two values (a run without ``--multirun``
refuses it) and ``a#b``, ``a=b``, ``'a' 'b'`` or ``sglang[r]:d4`` do not parse. This module
reproduces the lexer (longest match, ties to the rule written first) and the parser's value
rules, so every value is either Hydra's value or refused with Hydra's reason; a test compares it
with Hydra's parser on a corpus where Hydra is installed.

Functions (``choice(...)``, ``int(...)``) are refused: only Hydra evaluates them; any other call
(ROLL's ``list(range(0,4))`` unquoted) is Hydra's unknown function, refused with the quoted form. The text is
bounded before it is read: its length (``max_file_bytes``), its nesting (``max_depth``), its
values (``max_values``) and its interpolations (``max_interpolations``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from solver_placement._errors import PlacementConfigError, shown
from solver_placement._limits import check


class Kind(Enum):
    """The value mode's token types, in the order the lexer's rules are written (a tie in length
    goes to the first)."""

    POPEN = "POPEN"
    COMMA = "COMMA"
    PCLOSE = "PCLOSE"
    BRACKET_OPEN = "BRACKET_OPEN"
    BRACKET_CLOSE = "BRACKET_CLOSE"
    BRACE_OPEN = "BRACE_OPEN"
    BRACE_CLOSE = "BRACE_CLOSE"
    COLON = "COLON"
    EQUAL = "EQUAL"
    FLOAT = "FLOAT"
    INT = "INT"
    BOOL = "BOOL"
    NULL = "NULL"
    UNQUOTED_CHAR = "UNQUOTED_CHAR"
    ID = "ID"
    ESC = "ESC"
    WS = "WS"
    QUOTED = "QUOTED"
    INTERPOLATION = "INTERPOLATION"


_WS = r"[ \t]"
_UNSIGNED = r"(?:0|[1-9](?:_?[0-9])*)"
_POINT = rf"(?:{_UNSIGNED}?\.[0-9](?:_?[0-9])*|{_UNSIGNED}\.)"
_EXPONENT = rf"(?:(?:{_POINT}|{_UNSIGNED})[eE][+-]?[0-9](?:_?[0-9])*)"
_QUOTED_BODY = r"(?:(?:\\\\)*|.*?[^\\](?:\\\\)*)"
#: Each token type's pattern (OverrideLexer.g4, value mode), tried at every position.
_PATTERNS = tuple(
    (kind, re.compile(pattern, re.DOTALL))
    for kind, pattern in (
        (Kind.POPEN, rf"{_WS}*\({_WS}*"),
        (Kind.COMMA, rf"{_WS}*,{_WS}*"),
        (Kind.PCLOSE, rf"{_WS}*\)"),
        (Kind.BRACKET_OPEN, rf"\[{_WS}*"),
        (Kind.BRACKET_CLOSE, rf"{_WS}*\]"),
        (Kind.BRACE_OPEN, rf"\{{{_WS}*"),
        (Kind.BRACE_CLOSE, rf"{_WS}*\}}"),
        (Kind.COLON, rf"{_WS}*:{_WS}*"),
        (Kind.EQUAL, rf"{_WS}*={_WS}*"),
        (Kind.FLOAT, rf"[+-]?(?:{_EXPONENT}|{_POINT}|[Ii][Nn][Ff]|[Nn][Aa][Nn])"),
        (Kind.INT, rf"[+-]?{_UNSIGNED}"),
        (Kind.BOOL, r"[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]"),
        (Kind.NULL, r"[Nn][Uu][Ll][Ll]"),
        (Kind.UNQUOTED_CHAR, r"[/\-\\+.$%*@?|]"),
        (Kind.ID, r"[a-zA-Z_][a-zA-Z0-9_\-]*"),
        (Kind.ESC, r"(?:\\\\|\\[()\[\]{}:=, \t])+"),
        (Kind.WS, rf"{_WS}+"),
        (Kind.QUOTED, rf'"{_QUOTED_BODY}"|\'{_QUOTED_BODY}\''),
        (Kind.INTERPOLATION, r"\$\{[^}]+\}"),
    )
)
#: Tokens a primitive (an unquoted value) is made of; a dictionary key takes the same but
#: colons and interpolations.
_PRIMITIVE = frozenset({Kind.ID, Kind.NULL, Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.INTERPOLATION, Kind.UNQUOTED_CHAR, Kind.COLON, Kind.ESC, Kind.WS})
_DICT_KEY = _PRIMITIVE - {Kind.COLON, Kind.INTERPOLATION}
#: The functions Hydra's override grammar evaluates (``create_functions`` in
#: ``hydra/core/override_parser/overrides_parser.py``); any other name is Hydra's unknown function.
_HYDRA_FUNCTIONS = frozenset({"int", "str", "bool", "float", "choice", "range", "interval", "tag", "sort", "shuffle", "glob"})
#: A run of backslashes before a quote inside a quoted value: every other one is kept.
_ESCAPED_QUOTE = {"'": re.compile(r"\\+'"), '"': re.compile(r'\\+"')}


@dataclass(frozen=True)
class Token:
    kind: Kind
    text: str
    column: int


class HydraSyntaxError(Exception):
    """The value does not parse in Hydra's grammar (the message says where)."""


class _Sweep(Exception):
    """The value is a comma-separated list of values: a sweep, which only ``--multirun`` runs."""

    def __init__(self, count: int) -> None:
        super().__init__(count)
        self.count = count


class _Function(Exception):
    """The value calls a Hydra function (a sweep or a cast)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def override_value(item: str, raw: str) -> Any:
    """The value of override ``item`` (``raw``: what follows its ``=``) as Hydra reads it,
    refused in Hydra's terms when Hydra would not apply it in a run (see the module docstring)."""
    check("max_file_bytes", len(raw.encode()), f"override {shown(item)}", "the bytes of its value")
    text = raw.lstrip(" \t")  # Hydra's '=' token takes the blanks after it
    if not text:
        return ""
    try:
        return _Parser(_tokens(text), item).value()
    except _Sweep as sweep:
        raise PlacementConfigError(
            f"override {shown(item)}: Hydra reads {shown(text)} as a sweep over {sweep.count} values, which only runs with "
            f"--multirun; for one string, quote it ({_quoted(item, text)}); for a list, write it in brackets ([{text}])"
        ) from None
    except _Function as function:
        if function.name in _HYDRA_FUNCTIONS:
            raise PlacementConfigError(
                f"override {shown(item)}: {function.name}(...) is a Hydra sweep or cast function, which only Hydra evaluates; "
                "write the one value itself"
            ) from None
        raise PlacementConfigError(
            f"override {shown(item)}: Hydra reads {function.name}(...) as a call of a function it does not have "
            f"(Unknown function '{function.name}'); for the text itself, quote it ({_quoted(item, text)})"
        ) from None
    except HydraSyntaxError as error:
        raise PlacementConfigError(
            f"override {shown(item)}: Hydra's override grammar cannot read the value ({error}); "
            f"quote it ({_quoted(item, text)}) or escape the character with a backslash"
        ) from None


def written_value(text: str) -> str:
    """``text`` as typed after an override's ``=``: as it is when Hydra's grammar reads it (``4``,
    ``sglang:d4+fsdp:d4``), else in single quotes, its quotes and the backslashes before them
    escaped, so Hydra reads back exactly ``text`` (``'list(range(0,4))'``, ``'0-3,4-7'``)."""
    try:
        _Parser(_tokens(text), text).value()
        return text
    except (HydraSyntaxError, _Sweep, _Function):
        escaped = re.sub(r"(\\*)'", lambda run: run.group(1) * 2 + "\\'", text)
        return "'" + re.sub(r"(\\+)$", lambda run: run.group(1) * 2, escaped) + "'"


def _quoted(item: str, text: str) -> str:
    """The override with its value in single quotes, as typed in a shell."""
    key = item[: len(item) - len(text)].rstrip(" \t")
    return f"\"{key}{written_value(text)}\" in a shell"


def _tokens(text: str) -> list[Token]:
    """The value's tokens: at each position the longest match, a tie to the rule written first."""
    tokens: list[Token] = []
    position = 0
    while position < len(text):
        best: Token | None = None
        for kind, pattern in _PATTERNS:
            match = pattern.match(text, position)
            if match and match.end() > position and (best is None or match.end() - position > len(best.text)):
                best = Token(kind, match.group(), position)
        if best is None:
            raise HydraSyntaxError(f"no token starts at column {position + 1} ({shown(text[position])})")
        tokens.append(best)
        position += len(best.text)
    return tokens


class _Parser:
    """OverrideParser.g4's ``value`` rule over a token list, with the visitor's conversions
    (``hydra/core/override_parser/overrides_visitor.py``)."""

    def __init__(self, tokens: list[Token], item: str) -> None:
        self.tokens = tokens
        self.at = 0
        self.item = item
        self.values = 0
        self.interpolations = 0

    def value(self) -> Any:
        """``value: element | element (COMMA element)+`` (the second is a sweep)."""
        first = self._element(depth=1)
        count = 1
        while self._next(Kind.COMMA):
            self._element(depth=1)
            count += 1
        if self.at < len(self.tokens):
            self._unexpected()
        if count > 1:
            raise _Sweep(count)
        return first

    def _element(self, depth: int) -> Any:
        check("max_depth", depth, f"override {shown(self.item)}", "the nesting of its value")
        self.values += 1
        check("max_values", self.values, f"override {shown(self.item)}", "the values of its value")
        token = self._peek()
        if token is None:
            raise HydraSyntaxError("the value ends where a value should follow")
        following = self._peek(1)
        if token.kind == Kind.ID and following is not None and following.kind == Kind.POPEN:
            raise _Function(token.text)
        if self._next(Kind.BRACKET_OPEN):
            return self._items(Kind.BRACKET_CLOSE, lambda: self._element(depth + 1))
        if self._next(Kind.BRACE_OPEN):
            return dict(self._items(Kind.BRACE_CLOSE, lambda: self._pair(depth + 1)))
        if token.kind == Kind.QUOTED:
            self.at += 1
            return _unquoted(token.text)
        return self._primitive(_PRIMITIVE)

    def _items(self, close: Kind, item: Callable[[], Any]) -> list[Any]:
        """``(item (COMMA item)*)? close``: a list's elements or a dictionary's pairs."""
        found: list[Any] = []
        if self._next(close):
            return found
        found.append(item())
        while self._next(Kind.COMMA):
            found.append(item())
        if not self._next(close):
            self._unexpected()
        return found

    def _pair(self, depth: int) -> tuple[Any, Any]:
        """``dictKeyValuePair: dictKey COLON element``."""
        key = self._primitive(_DICT_KEY)
        if not self._next(Kind.COLON):
            self._unexpected()
        return key, self._element(depth)

    def _primitive(self, kinds: frozenset[Kind]) -> Any:
        """A run of primitive tokens: one token is read as its type (``_single``), several are
        joined as a string, blanks at either end dropped and escapes undone."""
        start = self.at
        while (token := self._peek()) is not None and token.kind in kinds:
            self.at += 1
        run = self.tokens[start : self.at]
        if not run:
            self._unexpected()
        if all(token.kind == Kind.WS for token in run):
            raise HydraSyntaxError("a value of blanks only")
        self.interpolations += sum(token.kind == Kind.INTERPOLATION for token in run)
        check("max_interpolations", self.interpolations, f"override {shown(self.item)}", "the interpolations of its value")
        trimmed = run[run[0].kind == Kind.WS : len(run) - (run[-1].kind == Kind.WS)]
        if len(trimmed) == 1:
            return _single(trimmed[0])
        return "".join(token.text[1::2] if token.kind == Kind.ESC else token.text for token in trimmed)

    def _peek(self, ahead: int = 0) -> Token | None:
        index = self.at + ahead
        return self.tokens[index] if index < len(self.tokens) else None

    def _next(self, kind: Kind) -> bool:
        """Take the next token if it is of ``kind``."""
        token = self._peek()
        if token is not None and token.kind == kind:
            self.at += 1
            return True
        return False

    def _unexpected(self) -> None:
        token = self._peek()
        if token is None:
            raise HydraSyntaxError("the value ends early (an unclosed bracket or brace, or a missing value)")
        raise HydraSyntaxError(f"{shown(token.text.strip() or token.text)} at column {token.column + 1} is not expected there")


def _single(token: Token) -> Any:
    """A one-token primitive as the visitor converts it (``_createPrimitive``)."""
    if token.kind == Kind.INT:
        digits = len(token.text.lstrip("+-").replace("_", ""))
        if digits > sys.get_int_max_str_digits():
            raise HydraSyntaxError(f"an integer of {digits} digits: Python, and so Hydra, reads at most {sys.get_int_max_str_digits()}")
        return int(token.text)
    if token.kind == Kind.FLOAT:
        return float(token.text)
    if token.kind == Kind.NULL:
        return None
    if token.kind == Kind.BOOL:
        return token.text.lower() == "true"
    if token.kind == Kind.ESC:
        return token.text[1::2]
    return token.text


def _unquoted(text: str) -> str:
    """A quoted value's text: the quotes dropped and, in each run of backslashes before a quote
    of its kind, every other backslash dropped (``_unescape_quoted_string``)."""
    quote, body = text[0], text[1:]
    pieces = []
    while (match := _ESCAPED_QUOTE[quote].search(body)) is not None:
        pieces.append(body[: match.start()])
        pieces.append(body[match.start() + 1 : match.end() : 2])
        body = body[match.end() :]
    pieces.append(body[:-1])
    return "".join(pieces)


__all__ = ["override_value", "written_value"]
