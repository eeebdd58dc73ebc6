"""Hypothesis strategies that build model responses around a gold answer, per problem type.

Each strategy draws a :class:`Case` (``response``, ``gold``, ``options`` and the ``form``
it was built in) for one problem type:

* :func:`gold_cases`: the gold in every accepted form (its readings of
  :mod:`~videorl_kit.testing.kinds`, the option text), inside an ``<answer>`` block, after a
  ``<think>`` block that doubts it, as a final statement (``The answer is X.``, ``Final
  answer: X``, ``\\boxed{X}``), between special tokens, in compatibility forms (full-width);
* :func:`wrong_cases`: a wrong candidate in the same forms;
* :func:`hedge_cases`: the gold and a wrong candidate together: ``G or W``, lists, one per
  line, two ``<answer>`` blocks, two ``\\boxed{}`` answers (inside a block or not), a
  correction that ends on the wrong one (``G. No wait, W.``);
* :func:`unanswered_cases`: the gold stated only inside ``<think>`` (closed or cut off), or
  before an empty ``<answer></answer>``;
* :func:`arbitrary_cases`: any text, tag and token fragments, lone surrogates, the gold's own
  pieces, with a valid gold; :func:`arbitrary_gold_cases` with any gold and options too;
* :func:`long_inputs`: 1 MB inputs (floods of tags, tokens, digits, hedges of the gold).

Example:
    >>> from hypothesis import given
    >>> from videorl_kit.rewards.router import reward_function_for
    >>> fn = reward_function_for("ocr")
    >>> @given(wrong_cases("ocr", golds=["EXIT 12"]))
    ... def test_wrong_words_score_below_the_gold(case):
    ...     assert fn(*case[:3]).accuracy < 1.0
    >>> test_wrong_words_score_below_the_gold()
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from hypothesis import strategies as st

from videorl_kit.core.problem_types import ProblemType
from videorl_kit.testing.kinds import Kind, Problem, kind_for


class Case(NamedTuple):
    """One input of a reward function, the form it was built in and the form of the gold it
    is about (what it is compared with: a hedge scores below the gold stated that way).

    ``fn(*case[:3])`` scores it.

    Example:
        >>> Case("<answer>12</answer>", "12", None, "answer block")[:3]
        ('<answer>12</answer>', '12', None)
    """

    response: str
    gold: str
    options: list[str] | None
    form: str
    gold_form: str = ""


# ----------------------------------------------------------------------------- building blocks

_REASONING = (
    "Let me look at the frames again.",
    "I count them one by one.",
    "The video shows it clearly.",
)
SPECIAL_TOKENS = ("<|im_end|>", "<|video_pad|>", "<|endoftext|>", "<|im_start|>", "<|vision_end|>")
#: Pieces arbitrary responses are made of (tags, tokens, answer phrases, digits, letters).
FRAGMENTS = (
    "<answer>", "</answer>", "<think>", "</think>", "<thought>", "<|video_pad|>", "<|im_end|>",
    "<|", "|>", "A", "B", "C", " or ", ", ", "The answer is ", "Final answer: ", "\\boxed{",
    "}", "{", "[", "]", '"time": ', '"boxes": ', "12", "2.5", "-3", "1/2", "5e99999",
    "twenty-one", "yes", "no", "not ", "Actually, ", "Response 1", "Tie", "e.g.", "A man",
    "\n", " ", "é", "十二", "\x00", "(", ")", "^", "!", "Ｂ", "½", "³", "\ud800",
)  # fmt: skip


#: The form of a case with arbitrary text and a readable gold (it must be graded: status ok).
ARBITRARY_TEXT = "arbitrary text"
#: Responses every check tries first: empty, blank and lone answers, tags alone, surrogates.
NASTY_RESPONSES = (
    "", " ", "<answer></answer>", "<answer> </answer>", "<answer>", "</answer>", "<think>",
    "</think>", "<answer>\x00</answer>", "<answer>\ud800</answer>", "\\boxed{}", "<|im_end|>",
)  # fmt: skip


def fullwidth(text: str) -> str:
    """``text`` with printable ASCII in its full-width compatibility forms (``Ｂ`` for ``B``).

    Example:
        >>> fullwidth("[10, 20]")
        '［１０，\\u3000２０］'
    """
    return "".join(
        chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" if c == " " else c for c in text
    )


Wrapper = Callable[[str, str], str]
#: How an answer text (and a wrong candidate, for the doubt inside <think>) becomes a response.
TAGGED: dict[str, Wrapper] = {
    "answer block": lambda x, w: f"<answer>{x}</answer>",
    "think then answer": lambda x, w: f"<think>{_REASONING[0]}</think><answer>{x}</answer>",
    "doubt inside think": lambda x, w: f"<think>Maybe {w}? No.</think>\n<answer>{x}</answer>",
    "special tokens": lambda x, w: f"<|im_start|>assistant\n<answer>{x}</answer><|im_end|>",
    "spaces in the block": lambda x, w: f"<answer>\n  {x}  \n</answer>",
}
STATEMENTS: dict[str, Wrapper] = {
    "final statement": lambda x, w: f"{_REASONING[1]} The answer is {x}.",
    "final answer line": lambda x, w: f"{_REASONING[2]}\nFinal answer: {x}",
    "boxed": lambda x, w: f"So the result is \\boxed{{{x}}}",
}
COMPAT: dict[str, Wrapper] = {
    "full-width in a block": lambda x, w: f"<answer>{fullwidth(x)}</answer>",
}


def _wrappers(kind: Kind, raw_text: bool) -> dict[str, Wrapper]:
    wrappers = dict(TAGGED)
    if kind.statements:
        wrappers |= STATEMENTS
        if not raw_text:
            wrappers |= COMPAT
    return wrappers


Hedge = Callable[[str, str], str]


def _hedges(kind: Kind) -> dict[str, Hedge]:
    hedges: dict[str, Hedge] = {
        "two answer blocks": lambda g, w: f"<answer>{g}</answer><answer>{w}</answer>",
        "two answer blocks, gold last": lambda g, w: f"<answer>{w}</answer>\n<answer>{g}</answer>",
    }
    for joiner in kind.joiners:
        hedges[f"joined by {joiner!r}"] = lambda g, w, j=joiner: f"<answer>{g}{j}{w}</answer>"
        hedges[f"joined by {joiner!r}, gold last"] = lambda g, w, j=joiner: (
            f"<answer>{w}{j}{g}</answer>"
        )
    if kind.statements:
        hedges |= {
            "two boxed answers": lambda g, w: f"It is \\boxed{{{g}}} or \\boxed{{{w}}}",
            "two boxed answers, gold last": lambda g, w: f"\\boxed{{{w}}}, then \\boxed{{{g}}}",
            "two boxed answers in a block": (
                lambda g, w: f"<answer>\\boxed{{{w}}} \\boxed{{{g}}}</answer>"
            ),
            "one per line": lambda g, w: f"<answer>{g}\n{w}</answer>",
            "correction to the wrong one": lambda g, w: f"<answer>{g}. No wait, {w}.</answer>",
            "second thoughts": lambda g, w: f"<answer>{g}? Actually, {w}.</answer>",
        }
    return hedges


def _unanswered(kind: Kind) -> dict[str, Wrapper]:
    said = (lambda x: f"The answer is {x}.") if kind.statements else (lambda x: x)
    return {
        "only inside think": lambda x, w: f"<think>{_REASONING[0]} {said(x)}</think>",
        "only inside think, then spaces": lambda x, w: f"<think>{said(x)}</think>\n  \n",
        "cut off inside think": lambda x, w: f"<think>{_REASONING[1]} {said(x)}",
        "empty answer block": lambda x, w: f"<think>{said(x)}</think><answer></answer>",
        "only inside thought": lambda x, w: f"<thought>{said(x)}</thought>",
    }


# ----------------------------------------------------------------------------- problems


def problems(
    problem_type: str | ProblemType | Kind,
    *,
    golds: Sequence[str] | None = None,
    options: Sequence[str] | None = None,
) -> st.SearchStrategy[Problem]:
    """Problems of ``problem_type``: generated, or the ``golds`` given (read by the type's
    kind where it can; otherwise the gold as written is its one known form).

    Example:
        >>> from hypothesis import find
        >>> find(problems("boolean", golds=["yes"]), lambda case: True).forms[0]
        'yes'
    """
    kind = problem_type if isinstance(problem_type, Kind) else kind_for(problem_type)
    if golds is None:
        return kind.problems
    if not golds:
        return st.nothing()
    read = []
    for gold in golds:
        problem = kind.from_gold(gold, options)
        read.append(
            problem or Problem(gold, None if options is None else tuple(options), (gold,), ())
        )
    return st.sampled_from(read)


@dataclass(frozen=True)
class _Source:
    kind: Kind
    problems: st.SearchStrategy[Problem]
    raw_text: bool


def _source(
    problem_type: str | ProblemType | Kind,
    golds: Sequence[str] | None,
    options: Sequence[str] | None,
    raw_text: bool,
    problem_strategy: st.SearchStrategy[Problem] | None = None,
) -> _Source:
    kind = problem_type if isinstance(problem_type, Kind) else kind_for(problem_type)
    chosen = problem_strategy
    if chosen is None:
        chosen = problems(kind, golds=golds, options=options)
    return _Source(kind, chosen, raw_text)


def _wrong_of(problem: Problem) -> str:
    return problem.wrongs[0] if problem.wrongs else "something else"


def hedge_partners(problem: Problem, gold_form: str) -> tuple[str, ...]:
    """The wrong candidates that make a hedge with ``gold_form``: those that do not contain
    it as a word (``I would not say yes`` with ``yes`` reads as one answer, not two).

    Example:
        >>> hedge_partners(Problem("yes", None, ("yes",), ("no", "I would not say yes")), "yes")
        ('no',)
    """
    word = re.compile(rf"(?<!\w){re.escape(gold_form)}(?!\w)", re.IGNORECASE)
    return tuple(w for w in problem.wrongs if not word.search(w))


@st.composite
def _wrapped(draw: st.DrawFn, source: _Source, family: str) -> Case:
    problem = draw(source.problems)
    pool = problem.forms if family == "gold" else problem.wrongs
    text = draw(st.sampled_from(pool)) if pool else draw(st.nothing())
    wrappers = _wrappers(source.kind, source.raw_text)
    name = draw(st.sampled_from(sorted(wrappers)))
    other = _wrong_of(problem) if family == "gold" else problem.forms[0]
    gold_form = text if family == "gold" else problem.forms[0]
    return Case(wrappers[name](text, other), problem.gold, problem.option_list, name, gold_form)


def gold_cases(
    problem_type: str | ProblemType | Kind,
    *,
    golds: Sequence[str] | None = None,
    options: Sequence[str] | None = None,
    raw_text: bool = False,
    problem_strategy: st.SearchStrategy[Problem] | None = None,
) -> st.SearchStrategy[Case]:
    """Responses that state the gold in an accepted form: each must score 1.

    ``raw_text``: the verifier reads text as written (no compatibility forms are generated).

    Example:
        >>> from hypothesis import find
        >>> find(gold_cases("multiple_choice"), lambda case: True).options is not None
        True
    """
    return _wrapped(_source(problem_type, golds, options, raw_text, problem_strategy), "gold")


def wrong_cases(
    problem_type: str | ProblemType | Kind,
    *,
    golds: Sequence[str] | None = None,
    options: Sequence[str] | None = None,
    raw_text: bool = False,
    problem_strategy: st.SearchStrategy[Problem] | None = None,
) -> st.SearchStrategy[Case]:
    """Responses that state a wrong candidate in an accepted form: each scores below the gold.

    Example:
        >>> from hypothesis import find
        >>> find(wrong_cases("boolean", golds=["yes"]), lambda case: True).gold
        'yes'
    """
    return _wrapped(_source(problem_type, golds, options, raw_text, problem_strategy), "wrong")


@st.composite
def _combined(draw: st.DrawFn, source: _Source, family: str) -> Case:
    problem = draw(source.problems)
    templates = _hedges(source.kind) if family == "hedge" else _unanswered(source.kind)
    name = draw(st.sampled_from(sorted(templates)))
    gold_form = draw(st.sampled_from(problem.forms))
    wrong = ""
    if family == "hedge":
        partners = hedge_partners(problem, gold_form)
        wrong = draw(st.sampled_from(partners)) if partners else draw(st.nothing())
    response = templates[name](gold_form, wrong)
    return Case(response, problem.gold, problem.option_list, name, gold_form)


def hedge_cases(
    problem_type: str | ProblemType | Kind,
    *,
    golds: Sequence[str] | None = None,
    options: Sequence[str] | None = None,
    raw_text: bool = False,
    problem_strategy: st.SearchStrategy[Problem] | None = None,
) -> st.SearchStrategy[Case]:
    """Responses that give the gold and a wrong candidate: each scores below the gold.

    Example:
        >>> from hypothesis import find
        >>> find(hedge_cases("critic"), lambda case: True).form in _hedges(kind_for("critic"))
        True
    """
    return _combined(_source(problem_type, golds, options, raw_text, problem_strategy), "hedge")


def unanswered_cases(
    problem_type: str | ProblemType | Kind,
    *,
    golds: Sequence[str] | None = None,
    options: Sequence[str] | None = None,
    raw_text: bool = False,
    problem_strategy: st.SearchStrategy[Problem] | None = None,
) -> st.SearchStrategy[Case]:
    """Responses whose only statement of the gold is inside ``<think>``: each scores 0.

    Example:
        >>> from hypothesis import find
        >>> "<think>" in find(unanswered_cases("ocr"), lambda case: True).response
        True
    """
    source = _source(problem_type, golds, options, raw_text, problem_strategy)
    return _combined(source, "unanswered")


def _texts(extra: Sequence[str] = ()) -> st.SearchStrategy[str]:
    pieces = st.sampled_from(FRAGMENTS + SPECIAL_TOKENS + tuple(extra))
    surrogate = st.characters(categories=["Cs"])
    return st.one_of(
        st.text(max_size=200),
        st.lists(st.one_of(pieces, surrogate, st.text(max_size=5)), max_size=30).map("".join),
    )


@st.composite
def _arbitrary(draw: st.DrawFn, source: _Source) -> Case:
    problem = draw(source.problems)
    text = draw(_texts(problem.forms + problem.wrongs))
    how = draw(st.sampled_from(("as it is", "in a block", "after think", "boxed")))
    response = {
        "as it is": text,
        "in a block": f"<answer>{text}</answer>",
        "after think": f"<think>{text}</think>{text}",
        "boxed": f"\\boxed{{{text}}}",
    }[how]
    return Case(response, problem.gold, problem.option_list, f"{ARBITRARY_TEXT}, {how}")


def arbitrary_cases(
    problem_type: str | ProblemType | Kind,
    *,
    golds: Sequence[str] | None = None,
    options: Sequence[str] | None = None,
    raw_text: bool = False,
    problem_strategy: st.SearchStrategy[Problem] | None = None,
) -> st.SearchStrategy[Case]:
    """Any text (tags, special tokens, lone surrogates, the gold's pieces) with a valid gold.

    Example:
        >>> from hypothesis import find
        >>> isinstance(find(arbitrary_cases("ocr"), lambda case: True).response, str)
        True
    """
    return _arbitrary(_source(problem_type, golds, options, raw_text, problem_strategy))


@st.composite
def _arbitrary_gold(draw: st.DrawFn, source: _Source) -> Case:
    problem = draw(st.one_of(source.problems, st.none()))
    pieces = (problem.gold, *problem.forms) if problem else ()
    gold = draw(st.one_of(_texts(pieces), st.sampled_from(source.kind.unreadable)))
    options = draw(
        st.one_of(
            st.none(),
            st.just(problem.option_list) if problem else st.none(),
            st.lists(st.text(max_size=20), max_size=5),
        )
    )
    response = draw(_texts(pieces))
    return Case(response, gold, options, "arbitrary gold and options")


def arbitrary_gold_cases(
    problem_type: str | ProblemType | Kind,
    *,
    golds: Sequence[str] | None = None,
    options: Sequence[str] | None = None,
    raw_text: bool = False,
    problem_strategy: st.SearchStrategy[Problem] | None = None,
) -> st.SearchStrategy[Case]:
    """Any response with any gold and any options (unreadable golds among them).

    Example:
        >>> from hypothesis import find
        >>> isinstance(find(arbitrary_gold_cases("boolean"), lambda case: True).gold, str)
        True
    """
    source = _source(problem_type, golds, options, raw_text, problem_strategy)
    return _arbitrary_gold(source)


def unreadable_gold_cases(
    problem_type: str | ProblemType | Kind,
    *,
    golds: Sequence[str] | None = None,
    options: Sequence[str] | None = None,
    raw_text: bool = False,
    problem_strategy: st.SearchStrategy[Problem] | None = None,
) -> st.SearchStrategy[Case]:
    """Golds the type cannot read, with responses that would state a readable gold.

    Example:
        >>> from hypothesis import find
        >>> case = find(unreadable_gold_cases("numerical"), lambda case: True)
        >>> case.gold in kind_for("numerical").unreadable
        True
    """
    source = _source(problem_type, golds, options, raw_text, problem_strategy)
    return _unreadable(source)


@st.composite
def _unreadable(draw: st.DrawFn, source: _Source) -> Case:
    gold = draw(st.sampled_from(source.kind.unreadable))
    problem = draw(st.one_of(source.problems, st.none()))
    if problem is None:
        response, options, form = draw(_texts()), None, "arbitrary text"
    else:
        text = draw(st.sampled_from(problem.forms + problem.wrongs))
        response, options, form = f"<answer>{text}</answer>", problem.option_list, "answer block"
    return Case(response, gold, options, f"unreadable gold, {form}")


def covering_cases(
    kind: Kind, problem: Problem, family: str, *, raw_text: bool = False
) -> list[Case]:
    """Every form of ``family`` once, for one problem: what a check tries before it searches.

    ``family`` is ``gold`` (each form in a block, then each wrapper), ``wrong``, ``hedge`` or
    ``unanswered`` (each template with the first gold form and wrong candidate).

    Example:
        >>> problem = kind_for("boolean").from_gold("yes")
        >>> cases = covering_cases(kind_for("boolean"), problem, "hedge")
        >>> [c.response for c in cases if c.form.startswith("joined by ' or '")]
        ['<answer>yes or no</answer>', '<answer>no or yes</answer>']
    """
    options = problem.option_list
    gold = problem.forms[0] if problem.forms else problem.gold
    if family in ("gold", "wrong"):
        pool = problem.forms if family == "gold" else problem.wrongs
        if not pool:
            return []
        other = _wrong_of(problem) if family == "gold" else gold
        wrappers = _wrappers(kind, raw_text)
        cases = [
            Case(f"<answer>{text}</answer>", problem.gold, options, "answer block",
                 text if family == "gold" else gold)
            for text in pool
        ]  # fmt: skip
        about = pool[0] if family == "gold" else gold
        cases += [
            Case(wrap(pool[0], other), problem.gold, options, name, about)
            for name, wrap in wrappers.items()
        ]
        return cases
    if family == "hedge":
        partners = hedge_partners(problem, gold)
        if not partners:
            return []
        templates = _hedges(kind)
        wrong = partners[0]
        return [
            Case(t(gold, wrong), problem.gold, options, name, gold) for name, t in templates.items()
        ]
    templates = _unanswered(kind)
    return [Case(t(gold, ""), problem.gold, options, name, gold) for name, t in templates.items()]


# ----------------------------------------------------------------------------- long inputs


@dataclass(frozen=True, slots=True)
class LongInput:
    """``prefix + unit * count + suffix``: an input whose size is set by ``count``.

    Example:
        >>> LongInput("digits", "<answer>", "1", "</answer>").text(3)
        '<answer>111</answer>'
        >>> LongInput("digits", "<answer>", "1", "</answer>").count_for(1000)
        983
    """

    name: str
    prefix: str
    unit: str
    suffix: str = ""

    def text(self, count: int) -> str:
        """The input with ``count`` units."""
        return f"{self.prefix}{self.unit * count}{self.suffix}"

    def count_for(self, size: int) -> int:
        """The unit count that makes the input ``size`` bytes long in UTF-8 (at least 1)."""
        fixed = _utf8_len(self.prefix) + _utf8_len(self.suffix)
        return max(1, (size - fixed) // _utf8_len(self.unit))

    def expression(self, count: int) -> str:
        """The input as a Python expression (``'<answer>' + '1' * 983 + '</answer>'``)."""
        parts = [repr(self.prefix)] if self.prefix else []
        parts.append(f"{self.unit!r} * {count}")
        if self.suffix:
            parts.append(repr(self.suffix))
        return " + ".join(parts)


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


#: Floods that stress extraction and every reader (the kit's own adversarial catalogue).
GENERIC_LONG_INPUTS: tuple[LongInput, ...] = (
    LongInput("letters", "", "a"),
    LongInput("less-than signs", "", "<"),
    LongInput("open answer tags", "", "<answer>"),
    LongInput("special-token flood", "", "<|"),
    LongInput("video pads", "", "<|video_pad|>", "<answer>C</answer>"),
    LongInput("braces", "", "{"),
    LongInput("boxed", "", "\\boxed{"),
    LongInput("answer phrases", "", "the answer is "),
    LongInput("digits", "", "1"),
    LongInput("numbers", "", "1 2 "),
    LongInput("huge answer", "<answer>", "A B ", "</answer>"),
    LongInput("huge json", '<answer>{"time": [', "1,", "2]}</answer>"),
    LongInput("nested lists", "", "["),
    LongInput("parentheses", "", "("),
    LongInput("dotted capital I", "", "İ", "<answer>C</answer>"),
    LongInput("whitespace answer", "<answer>", " ", "C</answer>"),
    LongInput("newlines", "", "\n"),
    LongInput("full-width", "<answer>", "Ｂ", "</answer>"),
    LongInput("superscripts", "<answer>1", "³", "</answer>"),
    LongInput("python dicts", "", "{'a': 1} "),
    LongInput("python dict prefixes", "", "{'a': "),
    LongInput("rejections", "<answer>", "not A, ", "</answer>"),
    LongInput("quantity words", "<answer>", "half a dozen ", "</answer>"),
    LongInput("powers", "<answer>", "9^999 ", "</answer>"),
    LongInput("huge exponents", "<answer>", "5e99999 ", "</answer>"),
    LongInput("inequalities", "<answer>", "x<", "</answer>"),
    LongInput("unclosed think, answers", "<think>" + "<answer>B</answer>" * 200, "x"),
    LongInput("superscript runs", "<answer>", "2³ ", "</answer>"),
    LongInput("vulgar fractions", "<answer>", "3½ ", "</answer>"),
    LongInput("bracketed rejections", "<answer>", "not (A); ", "</answer>"),
    LongInput("corrections", "<answer>", "A? No, ", "</answer>"),
    LongInput("pairs and scores", "<answer>", "a pair of a score of ", "</answer>"),
    LongInput("opposites", "<answer>", "opens closes left right ", "</answer>"),
    LongInput("lone surrogates", "<answer>", "\ud800x", "</answer>"),
)


def long_inputs(problem: Problem) -> list[LongInput]:
    """The generic floods plus floods of ``problem``'s own gold and hedges.

    Example:
        >>> names = [i.name for i in long_inputs(Problem("12", None, ("12",), ("53",)))]
        >>> "the gold repeated" in names, len(names) > 30
        (True, True)
    """
    gold = problem.forms[0] if problem.forms else problem.gold
    wrong = _wrong_of(problem)
    return [
        *GENERIC_LONG_INPUTS,
        LongInput("the gold repeated", "<answer>", f"{gold} ", "</answer>"),
        LongInput("hedges repeated", "<answer>", f"{gold} or {wrong}, ", "</answer>"),
        LongInput("boxed golds", "", f"\\boxed{{{gold}}} "),
        LongInput("answer blocks", "", f"<answer>{gold}</answer>"),
        LongInput(
            "think around the gold", "<think>", f"{gold} ", f"</think><answer>{gold}</answer>"
        ),
        LongInput("gold then a flood", f"<answer>{gold}</answer>", "x"),
    ]
