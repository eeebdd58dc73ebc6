"""Read the values a sandboxed child sends back: the strict decoder of the wire format.

The format is written by :func:`videorl_kit.rewards.sandbox_child.encode_value` (its module
docstring describes it). Everything the child sends is untrusted, so this reader accepts exactly
that format and nothing else: ``NaN``/``Infinity`` literals, numbers that overflow to infinity,
objects with other or several keys, malformed hex, ``complex`` parts that are not floats,
unhashable dict keys or set items, sets and dicts with many distinct items of one hash (building
them would take quadratic time on the host; see
:func:`~videorl_kit.rewards.plain_eval.check_hash_spread`), trailing text and nesting deeper than
:data:`~videorl_kit.rewards.sandbox_child.MAX_DEPTH` all raise
:class:`~videorl_kit.rewards.sandbox_child.WireError`. The caller bounds the text's size.

Example:
    >>> decode_value('{"tuple": [1, 2.0, "x", [null, true], {"dict": [["k", {"set": [3]}]]}]}')
    (1, 2.0, 'x', [None, True], {'k': {3}})
    >>> decode_value('{"float": "nan"}') != decode_value('{"float": "nan"}')
    True
    >>> decode_value("1e999")
    Traceback (most recent call last):
    ...
    videorl_kit.rewards.sandbox_child.WireError: a number overflows to infinity: 1e999
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from videorl_kit.rewards.plain_eval import EvalLimit, check_hash_spread
from videorl_kit.rewards.sandbox_child import MAX_DEPTH, WireError

_HEX_INT = re.compile(r"-?0x[0-9a-f]+")
_HEX_BYTES = re.compile(r"(?:[0-9a-f]{2})*")
_SPECIAL_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_LIST_ITERATOR = type(iter([]))


def decode_value(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Read one value written by :func:`encode_value`; anything else raises :class:`WireError`.

    Example:
        >>> decode_value('{"dict": [[{"tuple": [1, 2]}, {"bytes": "ff"}]]}')
        {(1, 2): b'\\xff'}
        >>> decode_value('{"dict": [[[1], 2]]}')
        Traceback (most recent call last):
        ...
        videorl_kit.rewards.sandbox_child.WireError: bad {"dict"}: unhashable type: 'list'
    """
    try:
        value = json.loads(
            text,
            parse_float=_finite_float,
            parse_constant=_no_constant,
            object_pairs_hook=_tagged_value,
        )
    except WireError:
        raise
    except RecursionError:
        raise WireError("value nested too deeply") from None
    except (ValueError, TypeError) as exc:
        raise WireError(f"not wire text: {exc}"[:300]) from None
    _check_depth(value, max_depth)
    return value


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise WireError(f"a number overflows to infinity: {text[:40]}")
    return number


def _no_constant(text: str) -> None:
    raise WireError(f"{text} is not allowed (non-finite floats are tagged)")


def _tagged_value(pairs: list[tuple[str, Any]]) -> Any:
    if len(pairs) != 1:
        raise WireError("a JSON object must hold exactly one type tag")
    tag, body = pairs[0]
    try:
        if tag in ("set", "frozenset") and type(body) is list:
            check_hash_spread(body)
        if tag in ("tuple", "set", "frozenset", "iterator") and type(body) is list:
            return {"tuple": tuple, "set": set, "frozenset": frozenset, "iterator": iter}[tag](body)
        if tag == "dict" and type(body) is list:
            if any(type(pair) is not list or len(pair) != 2 for pair in body):
                raise WireError('bad {"dict"}: items must be [key, value] pairs')
            check_hash_spread([key for key, _ in body], "a dict")
            return dict(body)
        if tag == "float" and type(body) is str and body in _SPECIAL_FLOATS:
            return _SPECIAL_FLOATS[body]
        if tag == "int" and type(body) is str and _HEX_INT.fullmatch(body):
            return int(body, 16)
        if tag in ("bytes", "bytearray") and type(body) is str and _HEX_BYTES.fullmatch(body):
            data = bytes.fromhex(body)
            return data if tag == "bytes" else bytearray(data)
        if (
            tag == "complex"
            and type(body) is list
            and len(body) == 2
            and all(type(part) is float for part in body)
        ):
            return complex(body[0], body[1])
    except (TypeError, EvalLimit) as exc:
        raise WireError(f"bad {{{json.dumps(tag)}}}: {exc}") from None
    raise WireError(f"bad or unknown type tag {json.dumps(tag)[:40]}")


_CONTAINERS = frozenset((list, tuple, set, frozenset, dict, _LIST_ITERATOR))


def _check_depth(value: Any, max_depth: int) -> None:
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        kind = type(item)
        if kind in (list, tuple, set, frozenset):
            children = list(item)
        elif kind is dict:
            children = [*item.keys(), *item.values()]
        elif kind is _LIST_ITERATOR:  # its list, read without consuming it
            children = list(item.__reduce__()[1][0])
        else:
            continue
        if depth >= max_depth:
            raise WireError(f"value nested deeper than {max_depth} levels")
        if _CONTAINERS.isdisjoint(set(map(type, children))):  # flat: nothing deeper (a C loop)
            continue
        pending.extend((child, depth + 1) for child in children if type(child) in _CONTAINERS)
