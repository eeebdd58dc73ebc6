"""The outcome of checking a verifier: one :class:`PropertyResult` per property, in a report.

A broken property carries its counterexample (Hypothesis's shrunk example where Hypothesis
searched), as the input that broke it, a ready-to-paste line for the golden case file
(:func:`~videorl_kit.testing.cases.case_line`) and the seed that reproduces it.

Example:
    >>> held = PropertyResult("never_raises", "held", "no input makes it raise", examples=100)
    >>> report = VerifierReport("numeric@2", "numerical", {}, seed=1, examples=100,
    ...                         properties=(held,))
    >>> report.ok, report.to_dict()["properties"][0]["status"]
    (True, 'held')
"""

from __future__ import annotations

import shlex
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from videorl_kit.core.safe_text import one_line

PropertyStatus = Literal["held", "broken", "skipped"]

#: The properties of the verifier contract, in report order, with what each means.
CONTRACT: dict[str, str] = {
    "never_raises": "no response, gold or options makes it raise; details are JSON",
    "bounded_time": "every input up to 1 MB is scored within the time budget",
    "deterministic": "same input, same verdict: again, after other inputs, from a new instance",
    "cross_process": "another process (another hash seed) gives the same verdicts",
    "picklable": "the verifier and its reward function pickle, and the copies agree",
    "thread_safe": "concurrent calls on one instance agree with serial ones",
    "gold_forms": "the gold in every accepted form scores 1",
    "wrong_answers": "a wrong candidate scores below the gold",
    "hedges": "a hedge of the gold and a wrong candidate scores below the gold",
    "unanswered": "the gold only inside <think>, or before an empty answer block, scores 0",
    "unverifiable_gold": "a gold it cannot read is unverifiable, never a silent 0",
    "golden_cases": "the golden case file agrees",
}


@dataclass(frozen=True, slots=True)
class PropertyResult:
    """One property of the verifier contract, checked.

    ``status``: ``held`` (no counterexample in ``examples`` tries), ``broken`` (``message``
    says how; ``example`` is the input, ``case_line`` the line to paste into the case file)
    or ``skipped`` (``message`` says why it could not run).
    """

    name: str
    status: PropertyStatus
    description: str
    examples: int = 0
    message: str = ""
    example: dict[str, Any] | None = None
    case_line: str | None = None
    seconds: float = 0.0

    @property
    def broken(self) -> bool:
        """True when the property does not hold."""
        return self.status == "broken"


@dataclass(frozen=True, slots=True)
class VerifierReport:
    """Every property checked for one verifier (``ok`` when none is broken).

    ``seed`` reproduces the run: ``videorl-kit reward check VERIFIER --seed SEED``.
    """

    verifier: str
    problem_type: str
    params: dict[str, Any]
    seed: int
    examples: int
    properties: tuple[PropertyResult, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True when no property is broken (skipped ones do not count)."""
        return not any(p.broken for p in self.properties)

    def broken(self) -> list[PropertyResult]:
        """The properties that do not hold."""
        return [p for p in self.properties if p.broken]

    def get(self, name: str) -> PropertyResult:
        """The result of property ``name`` (``KeyError`` when it was not checked)."""
        for prop in self.properties:
            if prop.name == name:
                return prop
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON) of the whole report."""
        return {
            "verifier": self.verifier,
            "problem_type": self.problem_type,
            "params": self.params,
            "seed": self.seed,
            "examples": self.examples,
            "ok": self.ok,
            "properties": [asdict(p) for p in self.properties],
        }

    def reproduce(self, prop: str | None = None) -> str:
        """The command that runs this check again (one property when ``prop`` is given).

        Example:
            >>> VerifierReport("numeric@2", "numerical", {}, 7, 100).reproduce("hedges")
            'videorl-kit reward check numeric@2 --problem-type numerical --seed 7 --property hedges'
            >>> VerifierReport("./my $(rm -rf ~).py:f", "numerical", {}, 7, 100).reproduce()[:48]
            "videorl-kit reward check './my $(rm -rf ~).py:f'"
        """
        words = ["videorl-kit", "reward", "check", self.verifier]
        words += ["--problem-type", self.problem_type, "--seed", str(self.seed)]
        if self.examples != 100:
            words += ["--examples", str(self.examples)]
        return shlex.join(words + (["--property", prop] if prop else []))

    def summary(self) -> str:
        """Plain text: one line per property, then each counterexample and its case line.

        Example:
            >>> r = PropertyResult("hedges", "broken", "hedges score below the gold",
            ...                    examples=3, message="'12 or 13' scored 1.0",
            ...                    case_line='{"id": "x"}')
            >>> print(VerifierReport("numeric@2", "numerical", {}, 7, 100, (r,)).summary())
            ... # doctest: +NORMALIZE_WHITESPACE
            numeric@2 (numerical), seed 7: 1 of 1 properties broken
              hedges: BROKEN after 3 examples: '12 or 13' scored 1.0
                case line: {"id": "x"}
                reproduce: videorl-kit reward check numeric@2 --problem-type numerical
                  --seed 7 --property hedges
        """
        broken = self.broken()
        lines = [
            f"{self.verifier} ({self.problem_type}), seed {self.seed}: "
            + (
                f"{len(broken)} of {len(self.properties)} properties broken"
                if broken
                else f"all {len(self.properties)} properties hold"
            )
        ]
        for prop in self.properties:
            if prop.status == "held":
                lines.append(f"  {prop.name}: held ({prop.examples} examples)")
            elif prop.status == "skipped":
                lines.append(f"  {prop.name}: skipped: {prop.message}")
            else:
                lines.append(
                    f"  {prop.name}: BROKEN after {prop.examples} examples: {prop.message}"
                )
                if prop.example and "expression" in prop.example:
                    lines.append(f"    input: {prop.example['expression']}")
                if prop.case_line:
                    lines.append(f"    case line: {prop.case_line}")
                lines.append(f"    reproduce: {self.reproduce(prop.name)}")
        return "\n".join(lines)


def short(text: str, limit: int = 120) -> str:
    """``text`` on one line, cut to ``limit`` characters (for messages).

    Example:
        >>> short("a" * 100, 12)
        'aaaaaaaaaaa…'
        >>> short("a\\nb")
        "'a\\\\nb'"
    """
    shown = one_line(text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"
