"""ROLL's ``device_mapping``: the Python expression a worker section gives for its GPUs, read
without running it.

ROLL evaluates the string with Python's ``eval`` (``WorkerConfig.__post_init__``,
``roll/configs/worker_config.py`` line 312 at 8eb27cc2, line 110 at v0.1.0), so a config may say
``list(range(0,8))``, ``"[6, 7]"``, ``list([0,1,2,3,8,9,10,11])`` or
``list(range(0,4)) + list(range(8,12))``. Running user text is never safe, so the expression is
parsed with :mod:`ast` and only what ROLL's configs use is computed here, with Python's meaning:
integer literals and arithmetic (``+ - * // %``, unary minus), ``range(...)`` with one to three
integers, list literals, ``list(x)`` of a range or list, ``+`` of two lists and ``*`` of a list by
an integer. Anything else (names, attribute access, other calls, comprehensions) is refused
naming what is allowed. Sizes are bounded before anything is built: the text by
``max_rank_text``, its parts by ``max_rank_pieces``, every list, range and device number by
``max_hardware_items`` (a device number counts the cluster's GPUs).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from solver_placement._errors import PlacementConfigError, cut, shown
from solver_placement._limits import check

#: What the message of a refused expression says is allowed.
ALLOWED = "integers, + - * // %, range(a, b[, step]), list literals, list(...) of those, and + of lists"

#: A value while computing: an integer, a list of integers, or a range (kept lazy: its length is known).
Value = int | list[int] | range


def device_mapping(text: object, where: str) -> tuple[int, ...] | None:
    """The device numbers ``text`` (a worker's ``device_mapping``) evaluates to, as ROLL's ``eval``
    would; None for a worker without one (ROLL runs it on CPUs only). ``where`` is the key, for messages."""
    if text is None:
        return None
    if isinstance(text, (list, tuple)):
        raise PlacementConfigError(
            f"{where}: ROLL evaluates device_mapping as a Python expression string and fails on a YAML list "
            f"(TypeError: eval() arg 1 must be a string, bytes or code object); write it as text: "
            f"{where.rsplit('.', 1)[-1]}: {shown(_as_text(text))}"
        )
    if not isinstance(text, str):
        raise PlacementConfigError(f"{where}: device_mapping must be a Python expression string such as 'list(range(0,8))', not {shown(text)}")
    check("max_rank_text", len(text), where, "the length of the expression")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as error:
        raise PlacementConfigError(f"{where}: ROLL's eval fails on {shown(cut(text, 120))}: SyntaxError: {error.msg}") from None
    check("max_rank_pieces", sum(1 for _ in ast.walk(tree)), where, "the parts of the expression")
    value = _value(tree.body, where, text)
    if isinstance(value, int):
        raise PlacementConfigError(
            f"{where}: {shown(cut(text, 120))} is the number {value}, not a list of device numbers; write e.g. 'list(range(0,{max(value, 1)}))'"
        )
    devices = tuple(value)
    negative = [device for device in devices if device < 0]
    if negative:
        raise PlacementConfigError(
            f"{where}: device number {negative[0]} is negative: ROLL numbers GPUs from 0 and would look up the negative node rank "
            f"{negative[0]} // num_gpus_per_node, which has no placement group (KeyError); use device numbers from 0"
        )
    return devices


def _as_text(items: Sequence[object]) -> str:
    """A YAML list as the expression string ROLL wants: one ascending run as ``list(range(a,b))``."""
    numbers = [item for item in items if isinstance(item, int) and not isinstance(item, bool)]
    if numbers and len(numbers) == len(items) and numbers == list(range(numbers[0], numbers[0] + len(numbers))):
        return f"list(range({numbers[0]},{numbers[0] + len(numbers)}))"
    return cut(repr(list(items)), 200)


def _value(node: ast.expr, where: str, text: str) -> Value:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return _number(node.value, where)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _value(node.operand, where, text)
        if not isinstance(operand, int):
            raise _refused(node, where, text, "a sign applies to numbers only")
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.List):
        items = [_value(item, where, text) for item in node.elts]
        if not all(isinstance(item, int) for item in items):
            raise _refused(node, where, text, "list items must be device numbers")
        return _sized([item for item in items if isinstance(item, int)], where)
    if isinstance(node, ast.BinOp):
        return _binary(node, _value(node.left, where, text), _value(node.right, where, text), where, text)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("range", "list") and not node.keywords:
        arguments = [_value(argument, where, text) for argument in node.args]
        if node.func.id == "range" and 1 <= len(arguments) <= 3 and all(isinstance(a, int) for a in arguments):
            if arguments[-1] == 0 and len(arguments) == 3:
                raise PlacementConfigError(f"{where}: ROLL's eval fails on {shown(cut(text, 120))}: ValueError: range() arg 3 must not be zero")
            return _sized(range(*[int(a) for a in arguments if isinstance(a, int)]), where)
        if node.func.id == "list" and len(arguments) == 1 and not isinstance(arguments[0], int):
            return _sized(list(arguments[0]), where)
    raise _refused(node, where, text, f"only {ALLOWED} are read")


def _binary(node: ast.BinOp, left: Value, right: Value, where: str, text: str) -> Value:
    if isinstance(left, int) and isinstance(right, int):
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and right == 0:
            raise PlacementConfigError(f"{where}: ROLL's eval fails on {shown(cut(text, 120))}: ZeroDivisionError")
        operations = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__, ast.FloorDiv: int.__floordiv__, ast.Mod: int.__mod__}
        operation = operations.get(type(node.op))
        if operation is not None:
            return _number(operation(left, right), where)
        raise _refused(node, where, text, f"only {ALLOWED} are read")
    if isinstance(node.op, ast.Add) and isinstance(left, list) and isinstance(right, list):
        check("max_hardware_items", len(left) + len(right), where, "the number of device numbers")
        return left + right
    if isinstance(node.op, ast.Mult) and isinstance(left, list) and isinstance(right, int):
        return _repeated(left, right, where)
    if isinstance(node.op, ast.Mult) and isinstance(left, int) and isinstance(right, list):
        return _repeated(right, left, where)
    kinds = f"{type(left).__name__} {_OPERATORS.get(type(node.op), type(node.op).__name__)} {type(right).__name__}"
    raise PlacementConfigError(f"{where}: ROLL's eval fails on {shown(cut(text, 120))}: TypeError: unsupported operands {kinds}")


_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%", ast.Div: "/"}


def _repeated(items: list[int], times: int, where: str) -> list[int]:
    check("max_hardware_items", len(items) * max(times, 0), where, "the number of device numbers")
    return items * times


def _number(value: int, where: str) -> int:
    check("max_hardware_items", abs(value), where, "a device number (or a number computing one)")
    return value


def _sized(value: list[int] | range, where: str) -> list[int] | range:
    check("max_hardware_items", len(value), where, "the number of device numbers")
    return value


def _refused(node: ast.expr, where: str, text: str, rule: str) -> PlacementConfigError:
    part = ast.get_source_segment(text.strip(), node) or type(node).__name__
    return PlacementConfigError(
        f"{where}: device_mapping {shown(cut(text, 120))}: {shown(cut(part, 60))} is not read ({rule}); write the device numbers as e.g. 'list(range(0,8))' or '[0, 1, 2, 3]'"
    )
