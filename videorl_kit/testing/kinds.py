"""What an answer looks like, per problem type: golds, the gold's accepted forms, wrong ones.

A :class:`Kind` knows one problem type's answers: a Hypothesis strategy of
:class:`Problem`\\ s (a gold, its options, the answer texts that state the gold and answer
texts that state a wrong candidate), how to read a gold a user gives, which joiners make a
hedge of two candidates (``"12 or 13"``), and golds that cannot be read. The wrong candidates
are plainly wrong (a number three times off, a disjoint interval or box, words that share
nothing with the gold), so they score 0 under any reasonable tolerance and partial credit.

A problem type the kit has no kind for (a user's) gets the generic kind: the golds a user
gives, and the forms and wrong answers that a case file grades (:func:`kind_from_cases`).

Example:
    >>> kind = kind_for("numerical")
    >>> problem = kind.from_gold("12", None)
    >>> problem.forms[:3]
    ('12', '12.0', 'twelve')
    >>> problem.wrongs[:2]  # three times the gold plus 17, and a negative number
    ('53', '-17')
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from videorl_kit.core.problem_types import ProblemType, canonical_problem_type
from videorl_kit.rewards.extract import extract_answer
from videorl_kit.testing.cases import GoldenCase, answer_text


@dataclass(frozen=True, slots=True)
class Problem:
    """A gold (as the data would hold it), its options, and answer texts about it.

    ``forms`` state the gold (each must score 1); ``wrongs`` state a wrong candidate (each
    must score below the gold). Either may be empty when nothing is known.

    Example:
        >>> Problem("yes", None, ("yes", "Yes."), ("no",)).forms[0]
        'yes'
    """

    gold: str
    options: tuple[str, ...] | None
    forms: tuple[str, ...]
    wrongs: tuple[str, ...]

    @property
    def option_list(self) -> list[str] | None:
        """The options as the reward function takes them."""
        return None if self.options is None else list(self.options)


@dataclass(frozen=True)
class Kind:
    """The answers of one problem type (see the module docstring)."""

    problem_type: str
    problems: st.SearchStrategy[Problem]
    read_gold: Callable[[str, Sequence[str] | None], Problem | None]
    #: What joins two candidates into a hedge ("12 or 13"); empty: only blocks and boxes.
    joiners: tuple[str, ...] = (" or ", ", ", " and ")
    #: Answers are natural language: final statements, \\boxed{}, corrections apply.
    statements: bool = True
    #: Golds that cannot be read: each must give status ``unverifiable``.
    unreadable: tuple[str, ...] = ("", "   ")
    #: Golds whose every form a check tries before it searches (besides the simplest one).
    cover: tuple[str, ...] = ()

    def from_gold(self, gold: str, options: Sequence[str] | None = None) -> Problem | None:
        """The problem for a gold a user gives, or None when this kind cannot read it."""
        try:
            return self.read_gold(gold, options)
        except (ValueError, TypeError, KeyError, IndexError, SyntaxError, ZeroDivisionError):
            return None


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


# ----------------------------------------------------------------------------- numbers

_NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty",
)  # fmt: skip


def _num_text(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return (
        format(float(value), "g")
        if _terminates(value)
        else f"{value.numerator}/{value.denominator}"
    )


def _terminates(value: Fraction) -> bool:
    q = value.denominator
    for p in (2, 5):
        while q % p == 0:
            q //= p
    return q == 1


def _number_forms(value: Fraction) -> list[str]:
    text = _num_text(value)
    forms = [text]
    if value.denominator == 1:
        n = value.numerator
        forms.append(f"{n}.0")
        if 0 <= n < len(_NUMBER_WORDS):
            forms.append(_NUMBER_WORDS[n])
        if abs(n) >= 1000:
            forms.append(f"{n:,}")
    forms += [f"{text} items", f"There are {text} in total"] if value >= 0 else []
    return forms


def _far_number(value: Fraction) -> Fraction:
    """A number no tolerance or relative measure mistakes for ``value``."""
    return 3 * abs(value) + 17 if value >= 0 else abs(value) + 17


def _number_wrongs(value: Fraction) -> list[str]:
    far = _num_text(_far_number(value))
    wrongs = [far, _num_text(-abs(value) - 5) if value >= 0 else far]
    if value.denominator == 1 and value > 0:
        wrongs.append(f"{value.numerator}e99999")  # beyond the float range: not the gold
        wrongs.append(f"minus {value.numerator}")  # a sign written as a word
    return wrongs


def _read_number(gold: str) -> Fraction:
    text = gold.strip().replace(",", "")
    if not text or text.lower() in ("nan", "inf", "-inf", "infinity"):
        raise ValueError(gold)
    value = Fraction(text)
    return value


def _numeric_problem(value: Fraction, gold: str | None = None) -> Problem:
    return Problem(
        gold if gold is not None else _num_text(value),
        None,
        _unique(_number_forms(value)),
        _unique(_number_wrongs(value)),
    )


_decimals = st.builds(
    lambda whole, tenths: Fraction(whole) + Fraction(tenths, 10),
    st.integers(0, 999),
    st.integers(1, 9),
)
_numbers = st.one_of(
    st.integers(0, 10**6).map(Fraction), st.integers(-500, -1).map(Fraction), _decimals
)


def _numeric_kind(
    problem_type: str, numbers: st.SearchStrategy[Fraction], cover: tuple[str, ...]
) -> Kind:
    return Kind(
        problem_type,
        numbers.map(_numeric_problem),
        lambda gold, options: _numeric_problem(_read_number(gold), gold),
        unreadable=("", "   ", "five or six", "n/a"),
        cover=cover,
    )


# ----------------------------------------------------------------------------- multiple choice

_LETTERS = "ABCDEFGH"
#: Option texts with no content word in common (the choice verifier reads paraphrases).
_OPTION_TEXTS = (
    "Red", "Blue", "Green", "Yellow", "Purple", "Orange", "dog", "horse", "bicycle", "guitar",
    "The door opens", "The light turns on", "A man jumps", "Snow falls",
)  # fmt: skip


def _choice_problem(texts: Sequence[str], index: int, gold_as_text: bool = False) -> Problem:
    letters = _LETTERS[: len(texts)]
    options = tuple(f"{letter}. {text}" for letter, text in zip(letters, texts, strict=True))
    letter, text = letters[index], texts[index]
    forms = [letter, f"({letter})", f"{letter}.", f"Option {letter}", options[index], text]
    wrongs: list[str] = []
    for other, other_text in zip(letters, texts, strict=True):
        if other != letter:
            wrongs += [other, f"({other})", other_text]
    gold = text if gold_as_text else letter
    return Problem(gold, options, _unique(forms), _unique(wrongs))


@st.composite
def _choice_problems(draw: st.DrawFn) -> Problem:
    texts = draw(st.lists(st.sampled_from(_OPTION_TEXTS), min_size=2, max_size=5, unique=True))
    index = draw(st.integers(0, len(texts) - 1))
    return _choice_problem(texts, index, gold_as_text=draw(st.booleans()))


def _read_choice(gold: str, options: Sequence[str] | None) -> Problem:
    if not options:
        raise ValueError("multiple choice needs options")
    texts, letters = [], []
    for option in options:
        letter, sep, text = option.partition(". ")
        if not sep or len(letter) != 1:
            raise ValueError(option)
        letters.append(letter)
        texts.append(text)
    if "".join(letters) != _LETTERS[: len(letters)]:
        raise ValueError("options are not lettered A, B, C, ...")
    key = gold.strip()
    index = letters.index(key) if key in letters else texts.index(key)
    problem = _choice_problem(texts, index, gold_as_text=key not in letters)
    return Problem(gold, tuple(options), problem.forms, problem.wrongs)


# ----------------------------------------------------------------------------- boolean

_YES = ("yes", "Yes", "Yes.", "Yes, it is.", "yeah", "true")
_NO = ("no", "No", "No.", "No, it is not.", "nope", "false")


def _boolean_problem(verdict: bool, gold: str | None = None) -> Problem:
    forms, others = (_YES, _NO) if verdict else (_NO, _YES)
    word = "yes" if verdict else "no"
    wrongs = (*others, f"I would not say {word}") if verdict else others
    return Problem(gold or word, None, forms, _unique(wrongs))


def _read_boolean(gold: str, options: Sequence[str] | None) -> Problem:
    key = gold.strip().lower()
    if key not in ("yes", "no", "true", "false"):
        raise ValueError(gold)
    return _boolean_problem(key in ("yes", "true"), gold)


# ----------------------------------------------------------------------------- grounding


def _literal(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return ast.literal_eval(text)


def _interval_problem(start: int, length: int, gold: str | None = None) -> Problem:
    s, e = start, start + length
    forms = [
        f"[{s}, {e}]",
        json.dumps({"time": [s, e]}),
        f"from {s} to {e} seconds",
        json.dumps({"start": s, "end": e}),
        f"[{s}.0, {e}.0]",
    ]
    far = e + 10
    wrongs = [f"[{far}, {far + length}]", json.dumps({"time": [far, far + length]})]
    return Problem(gold or json.dumps({"time": [s, e]}), None, _unique(forms), _unique(wrongs))


def _read_interval(gold: str, options: Sequence[str] | None) -> Problem:
    value = _literal(gold)
    s, e = value["time"] if isinstance(value, dict) else value
    if not (isinstance(s, int) and isinstance(e, int) and e > s >= 0):
        raise ValueError(gold)
    return _interval_problem(s, e - s, gold)


Box = tuple[int, int, int, int]
_boxes = st.builds(
    lambda x, y, w, h: (x, y, x + w, y + h),
    st.integers(0, 900),
    st.integers(0, 900),
    st.integers(1, 200),
    st.integers(1, 200),
)


def _shifted(box: Sequence[int]) -> list[int]:
    """A box of the same size that does not overlap ``box``."""
    x1, y1, x2, y2 = box
    return [x2 + 10, y1, x2 + 10 + (x2 - x1), y2]


def _box_problem(box: Box, gold: str | None = None) -> Problem:
    listed = list(box)
    forms = [
        json.dumps(listed),
        json.dumps({"boxes": listed}),
        "(" + ", ".join(map(str, listed)) + ")",
        json.dumps([listed]),
    ]
    wrong = _shifted(listed)
    wrongs = [json.dumps(wrong), json.dumps({"boxes": wrong})]
    return Problem(gold or json.dumps({"boxes": listed}), None, _unique(forms), _unique(wrongs))


def _read_box(gold: str, options: Sequence[str] | None) -> Problem:
    value = _literal(gold)
    box = value["boxes"] if isinstance(value, dict) else value
    if len(box) == 1 and isinstance(box[0], list | tuple):
        box = box[0]
    x1, y1, x2, y2 = (int(v) for v in box)
    if list(box) != [x1, y1, x2, y2] or not (x2 > x1 and y2 > y1):
        raise ValueError(gold)
    return _box_problem((x1, y1, x2, y2), gold)


def _track_problem(
    track: dict[int, Box], time: tuple[int, int] | None, gold: str | None = None
) -> Problem:
    boxes = {str(sec): list(box) for sec, box in sorted(track.items())}
    head = {"time": list(time)} if time else {}
    gold_value = {**head, "boxes": boxes}
    python_form = "{" + (f"'time': ({time[0]}, {time[1]}), " if time else "") + "'boxes': {"
    python_form += ", ".join(f"{sec}: {tuple(box)}" for sec, box in sorted(track.items())) + "}}"
    forms = [json.dumps(gold_value), python_form]
    wrong_head: dict[str, Any] = {}
    if time:
        far = time[1] + 10
        wrong_head = {"time": [far, far + time[1] - time[0]]}
    wrong = {**wrong_head, "boxes": {sec: _shifted(box) for sec, box in boxes.items()}}
    return Problem(gold or json.dumps(gold_value), None, _unique(forms), (json.dumps(wrong),))


@st.composite
def _tracks(draw: st.DrawFn, timed: bool) -> Problem:
    seconds = draw(st.lists(st.integers(0, 30), min_size=1, max_size=4, unique=True))
    track = {sec: draw(_boxes) for sec in seconds}
    time = (min(seconds), max(seconds) + draw(st.integers(1, 5))) if timed else None
    return _track_problem(track, time)


def _read_track(gold: str, timed: bool) -> Problem:
    value = _literal(gold)
    track = {}
    for sec, box in value["boxes"].items():
        x1, y1, x2, y2 = (int(v) for v in box)
        if list(box) != [x1, y1, x2, y2] or not (x2 > x1 and y2 > y1):
            raise ValueError(gold)
        track[int(sec)] = (x1, y1, x2, y2)
    time = None
    if timed:
        s, e = value["time"]
        if not (isinstance(s, int) and isinstance(e, int) and e > s):
            raise ValueError(gold)
        time = (s, e)
    if not track:
        raise ValueError(gold)
    return _track_problem(track, time, gold)


# ----------------------------------------------------------------------------- text

_WORDS = ("EXIT", "12", "hello", "world", "OPEN", "Main", "Street", "cafe", "2024", "STOP")
_OTHER_WORDS = ("violin", "river", "blanket", "ladder", "pepper", "tunnel", "walnut", "zebra")


def _ocr_problem(words: Sequence[str], gold: str | None = None) -> Problem:
    text = " ".join(words)
    forms = [text, text.upper(), text.lower(), f"{text}.", "  ".join(words)]
    others = [_OTHER_WORDS[i % len(_OTHER_WORDS)] for i in range(len(words))]
    wrong = " ".join(others)
    return Problem(gold or text, None, _unique(forms), (wrong, wrong.upper()))


def _read_words(gold: str, options: Sequence[str] | None) -> Problem:
    words = gold.split()
    if not words or len(words) > 50:
        raise ValueError(gold)
    return _ocr_problem(words, gold)


_SHORT_GOLDS = ("Paris", "red car", "kitchen", "guitar", "small dog", "the beach", "football")
_LONG_GOLDS = (
    "a man walks his dog in the park",
    "the woman opens the door and leaves the room",
    "two children are playing football on the grass",
    "a chef cuts vegetables on a wooden board",
)
_SHORT_WRONG = "violin"
_LONG_WRONG = "several cats sleep quietly under warm blankets tonight"


def _open_problem(gold: str) -> Problem:
    forms = [gold, gold.upper(), gold[:1].upper() + gold[1:] + "."]
    wrong = _LONG_WRONG if len(gold.split()) > 3 else _SHORT_WRONG
    return Problem(gold, None, _unique(forms), (wrong,))


def _read_open(gold: str, options: Sequence[str] | None) -> Problem:
    words = {w.lower().strip(".,!?") for w in gold.split()}
    if not words or words & {*_LONG_WRONG.split(), _SHORT_WRONG}:
        raise ValueError(gold)  # the wrong candidates would share words with this gold
    return _open_problem(gold)


# ----------------------------------------------------------------------------- math

_rationals = st.one_of(
    st.integers(-50, 50).map(Fraction),
    st.builds(Fraction, st.integers(-30, 30), st.integers(2, 12)).filter(
        lambda f: f.denominator != 1
    ),
)


def _latex(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    sign = "-" if value < 0 else ""
    return f"{sign}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


def _math_problem(value: Fraction, gold: str | None = None) -> Problem:
    latex = _latex(value)
    forms = [latex]
    if value.denominator != 1:
        forms += [f"{value.numerator}/{value.denominator}", latex.replace("\\frac", "\\dfrac")]
        if _terminates(value):
            forms.append(format(float(value), "g"))
    else:
        forms.append(f"{value.numerator}.0")
    wrongs = [_latex(value + 1), _latex(-value - 3 if value != -value - 3 else value + 2)]
    return Problem(gold or latex, None, _unique(forms), _unique(wrongs))


def _read_math(gold: str, options: Sequence[str] | None) -> Problem:
    text = gold.strip()
    if text.startswith("\\frac{") or text.startswith("-\\frac{"):
        sign = -1 if text.startswith("-") else 1
        num, _, den = (
            text.removeprefix("-").removeprefix("\\frac{").removesuffix("}").partition("}{")
        )
        return _math_problem(sign * Fraction(int(num), int(den)), gold)
    return _math_problem(Fraction(text), gold)


# ----------------------------------------------------------------------------- code

#: (body of the right function, body of a wrong one, the value it returns for x).
_PROGRAMS: tuple[tuple[str, str, Callable[[int], int]], ...] = (
    ("return x * x", "return x + 1000", lambda x: x * x),
    ("return 2 * x", "return x - 1000", lambda x: 2 * x),
    ("return x + 1", "return 1000 - x", lambda x: x + 1),
    ("return -x", "return x + 1000", lambda x: -x),
    ("return abs(x)", "return -abs(x) - 1", abs),
)


def _code_problem(program: int, inputs: Sequence[int], gold: str | None = None) -> Problem:
    right, wrong, func = _PROGRAMS[program]
    tests = [f"assert f({x}) == {func(x)}" for x in inputs]
    gold_text = gold or json.dumps({"entry_point": "f", "tests": tests})
    forms = [
        f"def f(x):\n    {right}",
        f"```python\ndef f(x):\n    {right}\n```",
        f'def f(x):\n    """The answer."""\n    {right}\n',
    ]
    return Problem(gold_text, None, tuple(forms), (f"def f(x):\n    {wrong}",))


@st.composite
def _code_problems(draw: st.DrawFn) -> Problem:
    program = draw(st.integers(0, len(_PROGRAMS) - 1))
    inputs = draw(st.lists(st.integers(-20, 20), min_size=1, max_size=3, unique=True))
    return _code_problem(program, inputs)


def _read_code(gold: str, options: Sequence[str] | None) -> Problem:
    raise ValueError("code golds are generated, not read")


# ----------------------------------------------------------------------------- critic

_LABELS = ("Response 1", "Response 2", "Tie")


def _critic_problem(label: str, gold: str | None = None) -> Problem:
    forms = [label, label.lower(), f"{label}."]
    if label != "Tie":
        forms.append(f"{label} is better.")
    else:
        forms.append("It's a tie.")
    wrongs = [other for other in _LABELS if other != label]
    return Problem(gold or label, None, _unique(forms), tuple(wrongs))


def _read_critic(gold: str, options: Sequence[str] | None) -> Problem:
    key = gold.strip().lower()
    label = next(label for label in _LABELS if label.lower() == key)
    return _critic_problem(label, gold)


# ----------------------------------------------------------------------------- the table

_KINDS: dict[ProblemType, Kind] = {
    ProblemType.MULTIPLE_CHOICE: Kind(
        "multiple_choice",
        _choice_problems(),
        _read_choice,
        joiners=(" or ", ", ", " and ", "/"),
    ),
    ProblemType.NUMERICAL: _numeric_kind("numerical", _numbers, ("12", "2.5", "-4", "1500")),
    ProblemType.REGRESSION: _numeric_kind(
        "regression",
        st.one_of(st.integers(1, 10_000).map(Fraction), _decimals.filter(lambda f: f >= 1)),
        ("12", "2.5"),
    ),
    ProblemType.BOOLEAN: Kind(
        "boolean",
        st.booleans().map(_boolean_problem),
        _read_boolean,
        joiners=(" or ", " ", "\n", ", "),
        unreadable=("", "   ", "maybe", "42"),
        cover=("yes", "no"),
    ),
    ProblemType.TEMPORAL_GROUNDING: Kind(
        "temporal_grounding",
        st.builds(_interval_problem, st.integers(0, 600), st.integers(1, 120)),
        _read_interval,
        unreadable=("", "   ", '{"time": [5, 5]}', "{"),
    ),
    ProblemType.SPATIAL_GROUNDING: Kind(
        "spatial_grounding",
        _boxes.map(_box_problem),
        _read_box,
        unreadable=("", "   ", '{"boxes": []}', "{"),
    ),
    ProblemType.SPATIOTEMPORAL_GROUNDING: Kind(
        "spatiotemporal_grounding",
        _tracks(timed=True),
        lambda gold, options: _read_track(gold, timed=True),
        unreadable=("", "   ", "{"),
    ),
    ProblemType.TRACKING: Kind(
        "tracking",
        _tracks(timed=False),
        lambda gold, options: _read_track(gold, timed=False),
        unreadable=("", "   ", "{"),
    ),
    ProblemType.OCR: Kind(
        "ocr",
        st.lists(st.sampled_from(_WORDS), min_size=1, max_size=5).map(_ocr_problem),
        _read_words,
    ),
    ProblemType.OPEN_ENDED: Kind(
        "open_ended",
        st.sampled_from(_SHORT_GOLDS + _LONG_GOLDS).map(_open_problem),
        _read_open,
        cover=_LONG_GOLDS[:1],
    ),
    ProblemType.MATH: Kind(
        "math", _rationals.map(_math_problem), _read_math, cover=("\\frac{1}{2}", "-3")
    ),
    ProblemType.CODE: Kind(
        "code",
        _code_problems(),
        _read_code,
        joiners=(),
        statements=False,
        unreadable=("", "   ", "{", '{"entry_point": "f", "tests": []}'),
    ),
    ProblemType.CRITIC: Kind(
        "critic",
        st.sampled_from(_LABELS).map(_critic_problem),
        _read_critic,
        unreadable=("", "   ", "Response 7"),
        cover=_LABELS,
    ),
}


def _as_problem(gold: str, options: Sequence[str] | None) -> Problem:
    return Problem(gold, None if options is None else tuple(options), (gold,), ())


def generic_kind(problem_type: str, problems: Sequence[Problem] = ()) -> Kind:
    """The kind of a problem type the kit knows no answers of: ``problems`` are all it has.

    Example:
        >>> generic_kind("ordering", [Problem("C, A, B", None, ("C, A, B",), ())]).joiners
        (' or ', ', ', ' and ')
    """
    strategy = st.sampled_from(list(problems)) if problems else st.nothing()
    return Kind(problem_type, strategy, _as_problem)


def kind_for(problem_type: str | ProblemType) -> Kind:
    """The kind of a problem type (the generic kind, without problems, for one unknown here).

    Example:
        >>> kind_for("mcq").problem_type
        'multiple_choice'
    """
    ptype = canonical_problem_type(str(problem_type))
    return _KINDS.get(ptype) or generic_kind(ptype.value)


def has_kind(problem_type: str | ProblemType) -> bool:
    """True when the kit generates answers for ``problem_type`` itself.

    Example:
        >>> has_kind("numerical")
        True
    """
    return canonical_problem_type(str(problem_type)) in _KINDS


def problems_from_cases(cases: Iterable[GoldenCase], problem_type: str) -> list[Problem]:
    """Problems read from graded cases of ``problem_type``: per gold, the answers its cases
    grade 1 (forms) and 0 (wrong), as the kit extracts them from the responses.

    Example:
        >>> from videorl_kit.testing.cases import parse_case, case_line
        >>> def graded(response, accuracy):
        ...     return parse_case(case_line("c", "ocr", response, "EXIT", None, accuracy, "graded"))
        >>> right, wrong = graded("<answer>EXIT</answer>", 1), graded("<answer>STOP</answer>", 0)
        >>> problems_from_cases([right, wrong], "ocr")
        [Problem(gold='EXIT', options=None, forms=('EXIT',), wrongs=('STOP',))]
    """
    grouped: dict[tuple[str, tuple[str, ...] | None], tuple[list[str], list[str]]] = {}
    for case in cases:
        if case.problem_type != problem_type or case.expected_status != "ok" or case.params:
            continue
        key = (answer_text(case.answer), None if case.options is None else tuple(case.options))
        forms, wrongs = grouped.setdefault(key, ([], []))
        extraction = extract_answer(case.response)
        if extraction.answer is None or not extraction.answer.strip():
            continue
        if case.expected_accuracy == 1.0:
            forms.append(extraction.answer)
        elif case.expected_accuracy == 0.0:
            wrongs.append(extraction.answer)
    return [
        Problem(gold, options, _unique([*forms, gold]) if forms else (gold,), _unique(wrongs))
        for (gold, options), (forms, wrongs) in grouped.items()
    ]
