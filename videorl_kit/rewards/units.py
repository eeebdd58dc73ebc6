"""Units of measurement, for one question only: does ``2 m (200 cm)`` restate one value?

A numeric answer often gives its value twice, the second time in other units and in
parentheses (``2 m (200 cm)``, ``5 miles (about 8 km)``, ``20 °C (68 °F)``). That is one value,
not two, when both units measure the same kind of quantity and the second value is the first
converted, as rounded to the digits written (``6 ft (1.8 m)``: 1.8288 m written with one
decimal). Anything else (``2 m (3 m)``, ``2 m (300 cm)``, ``4 (5 cm)``) is two values.

Example:
    >>> from fractions import Fraction as F
    >>> restates(F(2), "m", F(200), "cm", "200"), restates(F(2), "m", F(300), "cm", "300")
    (True, False)
    >>> restates(F(20), "°C", F(68), "°F", "68"), restates(F(6), "ft", F(18, 10), "m", "1.8")
    (True, True)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction


def _spellings(table: str) -> dict[str, Fraction]:
    """``{spelling: factor}`` from lines ``factor: spelling spelling ...``."""
    out: dict[str, Fraction] = {}
    for line in table.strip().splitlines():
        factor, _, names = line.partition(":")
        for name in names.split():
            out[name] = Fraction(factor.strip())
    return out


#: Each kind of quantity: spelling -> factor to its base unit (exact where defined exactly).
_LINEAR_KINDS: dict[str, dict[str, Fraction]] = {
    "length": _spellings(
        """
        1/1000: mm millimeter millimeters millimetre millimetres
        1/100: cm centimeter centimeters centimetre centimetres
        1: m meter meters metre metres
        1000: km kilometer kilometers kilometre kilometres
        0.0254: in inch inches
        0.3048: ft foot feet
        0.9144: yd yard yards
        1609.344: mi mile miles
        """
    ),
    "mass": _spellings(
        """
        1/1000000: mg milligram milligrams
        1/1000: g gram grams
        1: kg kilogram kilograms kilo kilos
        1000: t tonne tonnes
        0.45359237: lb lbs pound pounds
        0.028349523125: oz ounce ounces
        """
    ),
    "time": _spellings(
        """
        1/1000: ms millisecond milliseconds
        1: s sec secs second seconds
        60: min mins minute minutes
        3600: h hr hrs hour hours
        86400: day days
        604800: week weeks
        """
    ),
    "volume": _spellings(
        """
        1/1000: ml mL milliliter milliliters millilitre millilitres
        1: l L liter liters litre litres
        3.785411784: gal gallon gallons
        """
    ),
    "speed": _spellings(
        """
        1: m/s
        5/18: km/h kmh kph
        0.44704: mph
        """
    ),
    "area": _spellings(
        """
        1: m^2 m2 sqm
        1/10000: cm^2 cm2
        1000000: km^2 km2
        0.09290304: ft^2 ft2 sqft
        """
    ),
}


def _key(unit: str) -> str:
    """The table key of a unit as written: long names case-folded, symbols as written
    (``M`` is not ``m``), ``degrees C`` and ``° C`` as ``°C``."""
    unit = " ".join(unit.split())
    unit = re.sub(r"^(?:degrees?|deg)\s?(?=[CF]$)", "°", unit, flags=re.IGNORECASE)
    unit = re.sub(r"^(?:degrees?|deg)\s?(?=celsius|fahrenheit)", "", unit, flags=re.IGNORECASE)
    unit = unit.replace("° ", "°").replace("℃", "°C").replace("℉", "°F")
    return unit.casefold() if len(unit) > 2 else unit


_FACTOR: dict[str, tuple[str, Fraction]] = {
    _key(spelling): (kind, factor)
    for kind, table in _LINEAR_KINDS.items()
    for spelling, factor in table.items()
}
_CELSIUS_OFFSET = Fraction("273.15")
#: Temperatures convert with an offset: scale name -> (to kelvin, from kelvin).
_SCALES: dict[str, tuple[Callable[[Fraction], Fraction], Callable[[Fraction], Fraction]]] = {
    "celsius": (lambda v: v + _CELSIUS_OFFSET, lambda k: k - _CELSIUS_OFFSET),
    "fahrenheit": (
        lambda v: (v - 32) * Fraction(5, 9) + _CELSIUS_OFFSET,
        lambda k: (k - _CELSIUS_OFFSET) * Fraction(9, 5) + 32,
    ),
    "kelvin": (lambda v: v, lambda k: k),
}
_SCALE_OF: dict[str, str] = {
    _key(spelling): scale
    for scale, spellings in (
        ("celsius", "°C C celsius"),
        ("fahrenheit", "°F F fahrenheit"),
        ("kelvin", "K kelvin"),
    )
    for spelling in spellings.split()
}

#: Every spelling, longest first, for a regular expression (case-sensitive symbols included
#: as written; ``degrees C`` and ``° C`` too).
UNIT_PATTERN = r"(?:degrees?|deg)\s?(?:C|F|celsius|fahrenheit)\b|°\s?[CF]|[℃℉]|" + "|".join(
    re.escape(spelling)
    for spelling in sorted(
        {
            *(s for t in _LINEAR_KINDS.values() for s in t),
            "celsius",
            "fahrenheit",
            "kelvin",
            "C",
            "F",
            "K",
        },
        key=len,
        reverse=True,
    )
)


def _half_last_digit(written: str) -> Fraction:
    """Half a unit of the last digit written (``1.8`` → 0.05, ``200`` → 0.5)."""
    _, point, decimals = written.strip().partition(".")
    places = sum(ch.isdigit() for ch in decimals) if point else 0
    return Fraction(1, 2 * 10**places)


def restates(value: Fraction, unit: str, other: Fraction, other_unit: str, written: str) -> bool:
    """Whether ``other other_unit`` is ``value unit`` in other units (``written``: how
    ``other`` was written, for its precision). The units must differ and measure the same kind
    of quantity; ``other`` must be the conversion rounded to the digits written, or within 1 %.
    """
    key, other_key = _key(unit), _key(other_unit)
    if key == other_key:
        return False
    if key in _FACTOR and other_key in _FACTOR:
        (kind, factor), (other_kind, other_factor) = _FACTOR[key], _FACTOR[other_key]
        if kind != other_kind or factor == other_factor:
            return False
        exact = value * factor / other_factor
    elif key in _SCALE_OF and other_key in _SCALE_OF:
        scale, other_scale = _SCALE_OF[key], _SCALE_OF[other_key]
        if scale == other_scale:
            return False
        exact = _SCALES[other_scale][1](_SCALES[scale][0](value))
    else:
        return False
    return abs(exact - other) <= max(_half_last_digit(written), abs(exact) / 100)


def convert(value: Fraction, unit: str, to_unit: str) -> Fraction | None:
    """``value`` in ``unit`` expressed in ``to_unit`` when both are linear units of one kind
    (length, mass, time, volume, speed, area), else None.

    Example:
        >>> convert(Fraction("1.2"), "m", "cm")
        Fraction(120, 1)
    """
    a, b = _FACTOR.get(_key(unit)), _FACTOR.get(_key(to_unit))
    if a is None or b is None or a[0] != b[0]:
        return None
    return value * a[1] / b[1]
