"""From a problem type (or a spec) to a reward function: extraction → verifier → RewardResult.

A :class:`RewardFunction` is picklable (plain attributes), thread-safe (no mutable state) and
deterministic. It never raises on model output: a verifier that raises on a response gives status
``error`` (the exception's class and message in ``details``); an unreadable ground truth gives
status ``unverifiable``. Both score 0 and are masked by trainers.

Example:
    >>> fn = reward_function_for("numerical", verifier=("numeric", 2, {"abs_tol": 0.5}))
    >>> r = fn("<think>3 cats and 2 dogs</think><answer>5.4</answer>", "5")
    >>> r.accuracy, r.format, r.overall, r.status
    (1.0, 1.0, 1.0, 'ok')
    >>> fn("<answer>5</answer>", "five or six").status
    'unverifiable'
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, ValidationError

from videorl_kit.core.problem_types import FROM_ROW, ProblemType, canonical_problem_type
from videorl_kit.core.reward_rules import ANSWER_SOURCES, FORMAT_RULES, RewardWeights
from videorl_kit.core.verifiers import default_verifier_name, get_verifier
from videorl_kit.rewards.base import MASKED_STATUSES, STATUS_ERROR, VerifyOutcome, clamp01
from videorl_kit.rewards.extract import MAX_BOXES, Extraction, extract_answer, shorten
from videorl_kit.rewards.format import check_format
from videorl_kit.rewards.result import RewardResult, error_details
from videorl_kit.rewards.text import fold_compat, remove_invisible, withdrawn

VerifierArg = str | Sequence[Any] | None


def _as_text(value: Any) -> str:
    """Model output or ground truth as text (JSON for dicts/lists, "" for None)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, dict | list | tuple):
        try:
            return json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


def _as_options(options: Any) -> list[str] | None:
    if options is None:
        return None
    if isinstance(options, str):
        try:
            decoded = json.loads(options)
        except ValueError:
            return None
        options = decoded
    if isinstance(options, list | tuple):
        return [_as_text(o) for o in options] or None
    return None


def _check_weights(weights: Sequence[float]) -> tuple[float, float]:
    if len(weights) != 2:
        raise ValueError(f"weights must be (accuracy, format), got {weights!r}")
    try:
        checked = RewardWeights(accuracy=weights[0], format=weights[1])
    except ValidationError as exc:
        problems = "; ".join(error["msg"] for error in exc.errors())
        raise ValueError(f"weights {tuple(weights)!r}: {problems}") from None
    return checked.accuracy, checked.format


class RewardFunction:
    """Scores responses for one problem type with one verifier, format rule and weights.

    Build it with :func:`reward_function_for` or :func:`reward_function_from_spec`.

    Example:
        >>> fn = reward_function_for("boolean")
        >>> fn("<answer>Yes, it is.</answer>", "yes").overall
        1.0
        >>> items = [("<answer>no</answer>", "yes"), {"response": "yes", "answer": "yes"}]
        >>> [r.overall for r in fn.score_batch(items)]
        [0.1, 0.9]
    """

    def __init__(
        self,
        problem_type: ProblemType,
        verifier_name: str,
        verifier_version: int,
        params: BaseModel,
        format_rule: str,
        weights: tuple[float, float],
        answer_source: str = "auto",
    ) -> None:
        info = get_verifier(verifier_name, verifier_version)
        self.problem_type = problem_type
        self.verifier_name = info.name
        self.verifier_version = info.version
        self.params = info.validate_params(params)
        self.format_rule = format_rule
        self.weights = weights
        self.answer_source = answer_source
        self._verifier = info.create(self.params)
        self._tag = f"{info.name}@{info.version}"
        self._fold = not info.raw_text

    def __repr__(self) -> str:
        return (
            f"RewardFunction({self.problem_type.value!r}, verifier={self._tag!r}, "
            f"params={self.params.model_dump()!r}, format={self.format_rule!r}, "
            f"weights={self.weights!r}, answer_source={self.answer_source!r})"
        )

    # ------------------------------------------------------------------ scoring

    def _verify(self, ex: Extraction, gold: str, options: list[str] | None) -> VerifyOutcome:
        answer = ex.answer
        text = answer if answer else ""
        try:
            if self._fold:  # compatibility forms folded once, for every verifier that reads text
                text, gold = fold_compat(text), fold_compat(gold)
                if options is not None and not all(map(str.isascii, options)):
                    options = [fold_compat(o) for o in options]
            outcome = self._verifier.score(text, gold, options)
            if ex.boxed and answer and self._fold:
                outcome = self._boxes_agree(ex.boxed, outcome, gold, options)
            if ex.restated and answer and self._fold:  # "<answer>B</answer> The answer is C."
                outcome = self._boxes_agree(
                    ex.restated,
                    outcome,
                    gold,
                    options,
                    "a value stated after the <answer> block disagrees with it (hedge)",
                )
            if ex.trailing and answer and self._fold:
                outcome = self._offer_agrees(text, ex.trailing, outcome, gold, options)
        except Exception as exc:  # a verifier bug must not kill a training step
            return VerifyOutcome(0.0, STATUS_ERROR, error_details(exc))
        if not isinstance(outcome, VerifyOutcome):
            return _contract_error(f"verifier returned {type(outcome).__name__}")
        acc = outcome.accuracy
        if not (isinstance(acc, int | float) and math.isfinite(acc) and 0 <= acc <= 1):
            return _contract_error(f"verifier returned accuracy {acc!r}")
        if outcome.status in MASKED_STATUSES:
            return outcome
        if outcome.status != "ok":
            return _contract_error(f"verifier returned status {outcome.status!r}")
        if not answer:  # hedge, empty answer block, empty response: never credit
            reason = ex.reason or "no answer"
            return VerifyOutcome(0.0, "ok", {**outcome.details, "reason": reason})
        if outcome.accuracy and self._fold and withdrawn(text):  # "B. Just kidding."
            reason = "the answer is withdrawn with nothing in its place"
            return VerifyOutcome(0.0, "ok", {**outcome.details, "reason": reason})
        return outcome

    def _boxes_agree(
        self,
        boxes: tuple[str, ...],
        outcome: VerifyOutcome,
        gold: str,
        options: list[str] | None,
        reason: str | None = None,
    ) -> VerifyOutcome:
        """``outcome`` when the answer's different ``\\boxed{}`` contents agree, else a hedge.

        Each box is graded as the answer by itself. They agree when every one scores as the
        whole answer does and either that score is 1 (``\\boxed{1/2}`` and ``\\boxed{0.5}``)
        or every box reads as the same prediction (``details["pred"]``); anything else states
        two answers and scores 0 (``\\boxed{3} or \\boxed{4}``: the last box no longer wins).
        """
        if outcome.status != "ok":
            return outcome
        reason = reason or (
            f"{len(boxes)} different \\boxed{{}} answers (hedge)"
            if len(boxes) > 1
            else "a \\boxed{} answer beside the <answer> block disagrees with it (hedge)"
        )
        if len(boxes) > MAX_BOXES:
            return VerifyOutcome(0.0, "ok", {**outcome.details, "reason": reason})
        pred = outcome.details.get("pred")
        for box in boxes:
            each = self._verifier.score(fold_compat(box), gold, options)
            if not isinstance(each, VerifyOutcome) or each.accuracy != outcome.accuracy:
                break
            if outcome.accuracy != 1.0 and (pred is None or each.details.get("pred") != pred):
                break
        else:
            return outcome
        return VerifyOutcome(0.0, "ok", {**outcome.details, "reason": reason})

    def _offer_agrees(
        self,
        answer: str,
        trailing: str,
        outcome: VerifyOutcome,
        gold: str,
        options: list[str] | None,
    ) -> VerifyOutcome:
        """``outcome`` unless the words right after the answer offer another value.

        The answer is graded again with those words (``4`` with ``, or possibly 5``: ``4, or
        possibly 5``); when that scores lower, the words offered a second value and the answer
        is a hedge (``\\boxed{4} (or 5)``, ``<answer>B</answer> but C is also possible``).
        """
        if outcome.status != "ok" or not outcome.accuracy:
            return outcome
        words = fold_compat(trailing.replace("$", " "))
        joined = f"{answer.replace('$', ' ').strip()} {words}"
        again = self._verifier.score(joined, gold, options)
        if not isinstance(again, VerifyOutcome) or again.accuracy >= outcome.accuracy:
            return outcome
        reason = f"a second value offered after the answer ({shorten(trailing, 60)!r}): hedge"
        return VerifyOutcome(0.0, "ok", {**outcome.details, "reason": reason})

    def __call__(self, response: Any, answer: Any, options: Any = None) -> RewardResult:
        """Score one response against its ground truth (``options`` for multiple choice)."""
        try:
            text = _as_text(response)
            ex = extract_answer(
                remove_invisible(text) if self._fold else text, tag_variants=self._fold
            )
            fmt = check_format(ex, self.format_rule)  # the format is read from the extraction
            if self.answer_source != "auto" and ex.source != "answer_tag":
                ex = _without_answer(ex)
            outcome = self._verify(ex, _as_text(answer), _as_options(options))
            details: dict[str, Any] = {
                "verifier": self._tag,
                "extracted": None if ex.answer is None else shorten(ex.answer, 200),
                "source": ex.source,
            }
            if fmt.reason:
                details["format_reason"] = fmt.reason
            if outcome.details:
                details.update(outcome.details)
            if outcome.status in MASKED_STATUSES:
                return RewardResult(0.0, fmt.score, 0.0, outcome.status, details)
            w_acc, w_fmt = self.weights
            overall = clamp01(w_acc * outcome.accuracy + w_fmt * fmt.score)
            return RewardResult(outcome.accuracy, fmt.score, overall, "ok", details)
        except Exception as exc:  # defensive: extraction or formatting bug
            return RewardResult.error(exc, verifier=self._tag)

    def score_batch(
        self, items: Iterable[Mapping[str, Any] | Sequence[Any]], *, max_workers: int = 1
    ) -> list[RewardResult]:
        """Score many items, results in input order.

        Items are mappings with ``response``, ``answer`` and optional ``options``, or tuples
        ``(response, answer[, options])``. ``max_workers > 1`` scores in a thread pool (useful
        for ``code_exec`` and ``math``, whose work happens outside the GIL or in subprocesses).

        Example:
            >>> fn = reward_function_for("multiple_choice")
            >>> [r.accuracy for r in fn.score_batch([("<answer>B</answer>", "B"), ("A or B", "B")])]
            [1.0, 0.0]
        """
        rows = [self._unpack(item) for item in items]
        if max_workers <= 1 or len(rows) <= 1:
            return [self(*row) for row in rows]
        with ThreadPoolExecutor(max_workers=max_workers) as pool:
            return list(pool.map(lambda row: self(*row), rows))

    @staticmethod
    def _unpack(item: Mapping[str, Any] | Sequence[Any]) -> tuple[Any, Any, Any]:
        if isinstance(item, Mapping):
            return item.get("response"), item.get("answer"), item.get("options")
        if isinstance(item, Sequence) and not isinstance(item, str) and 2 <= len(item) <= 3:
            return item[0], item[1], item[2] if len(item) == 3 else None
        return None, None, None

    # ------------------------------------------------------------------ explanation

    def explain(self, response: Any, answer: Any, options: Any = None) -> dict[str, Any]:
        """Every step for one input: extraction, format check, verifier outcome, scores.

        Example:
            >>> steps = reward_function_for("mcq").explain("A man enters. The answer is (C).", "C")
            >>> steps["extraction"]["answer"], steps["result"]["accuracy"]
            ('(C)', 1.0)
        """
        text = _as_text(response)
        ex = extract_answer(remove_invisible(text) if self._fold else text, tag_variants=self._fold)
        if self.answer_source != "auto" and ex.source != "answer_tag":
            ex = _without_answer(ex)
        fmt = check_format(ex, self.format_rule)
        result = self(response, answer, options)
        return {
            "problem_type": self.problem_type.value,
            "verifier": self._tag,
            "params": self.params.model_dump(),
            "format_rule": self.format_rule,
            "answer_source": self.answer_source,
            "weights": {"accuracy": self.weights[0], "format": self.weights[1]},
            "raw": shorten(text, 2000),
            "extraction": ex.steps(),
            "format": {"score": fmt.score, "reason": fmt.reason},
            "gold": shorten(_as_text(answer), 500),
            "options": _as_options(options),
            "result": result.to_dict(),
        }


def _without_answer(ex: Extraction) -> Extraction:
    """``ex`` with no answer: what ``answer_source: answer_tag`` makes of an untagged response."""
    return ex._replace(
        answer=None, source="none", reason="no <answer> block (answer_source: answer_tag)"
    )


def _contract_error(message: str) -> VerifyOutcome:
    """Status ``error`` for a verifier that broke its contract (wrong type, accuracy, status)."""
    details = {"error_type": "VerifierContractError", "error": message}
    return VerifyOutcome(0.0, STATUS_ERROR, details)


def _verifier_triple(
    problem_type: ProblemType, verifier: VerifierArg
) -> tuple[str, int | None, Any]:
    if verifier is None:
        return default_verifier_name(problem_type), None, None
    if isinstance(verifier, str):
        return verifier, None, None
    parts = list(verifier)
    if not 1 <= len(parts) <= 3 or not isinstance(parts[0], str):
        raise ValueError(f"verifier must be (name, version, params), got {verifier!r}")
    parts += [None] * (3 - len(parts))
    return parts[0], parts[1], parts[2]


def reward_function_for(
    problem_type: ProblemType | str,
    verifier: VerifierArg = None,
    format_rule: str = "answer_tag",
    weights: Sequence[float] = (0.9, 0.1),
    answer_source: str = "auto",
) -> RewardFunction:
    """Build the reward function for a problem type (aliases accepted).

    ``verifier`` is ``(name, version, params)`` (version None = latest, params a dict or the
    verifier's params model), a bare name, or None for the type's default verifier.
    ``answer_source`` is ``"auto"`` (the ``<answer>`` block, else the final statement, else the
    text outside ``<think>``) or ``"answer_tag"`` (only the ``<answer>`` block: a response
    without one has no answer). Configuration errors (unknown type/verifier/format rule/answer
    source, bad params or weights, a verifier that does not handle the type) raise
    ``ValueError`` (``UnknownVerifierError`` is a ``LookupError``) at build time, never while
    scoring.

    Example:
        >>> reward_function_for("regression").verifier_name
        'mra'
        >>> reward_function_for("ocr", format_rule="none")("Hello world", "hello world").overall
        1.0
        >>> strict = reward_function_for("multiple_choice", answer_source="answer_tag")
        >>> strict("The answer is B.", "B").accuracy, strict("<answer>B</answer>", "B").accuracy
        (0.0, 1.0)
    """
    ptype = canonical_problem_type(str(problem_type))
    name, version, params = _verifier_triple(ptype, verifier)
    info = get_verifier(name, version)
    if ptype not in info.problem_types:
        handled = ", ".join(sorted(t.value for t in info.problem_types))
        raise ValueError(
            f"verifier {info.name!r} does not handle problem type {ptype.value!r} "
            f"(it handles: {handled})"
        )
    if format_rule not in FORMAT_RULES:
        raise ValueError(
            f"unknown format rule {format_rule!r}; valid rules: {', '.join(FORMAT_RULES)}"
        )
    if answer_source not in ANSWER_SOURCES:
        raise ValueError(
            f"unknown answer source {answer_source!r}; valid: {', '.join(ANSWER_SOURCES)}"
        )
    return RewardFunction(
        ptype,
        info.name,
        info.version,
        info.validate_params(params),
        format_rule,
        _check_weights(weights),
        answer_source,
    )


def reward_function_from_spec(
    spec: Any, problem_type: ProblemType | str | None = None
) -> RewardFunction:
    """Build the reward function a task spec declares for one problem type (attribute access only).

    Reads ``spec.problem_type``, ``spec.verifier.name/.version/.params`` (or, for a
    ``problem_type: from_row`` spec, the entry of ``spec.verifiers`` for ``problem_type``;
    types without one use their default verifier), ``spec.reward.format``,
    ``spec.reward.weights.accuracy/.format`` and ``spec.reward.answer_source``; a missing
    ``verifier``, ``reward`` or ``answer_source`` means the defaults. ``problem_type`` is
    required for a ``from_row`` spec and must be the spec's own type otherwise. To score rows
    of a spec with per-row routing, use :class:`videorl_kit.rewards.task.TaskReward`.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> spec = NS(problem_type="numerical",
        ...           verifier=NS(name="numeric", version=2, params={"abs_tol": 1}),
        ...           reward=NS(format="none", weights=NS(accuracy=1.0, format=0.0)))
        >>> reward_function_from_spec(spec)("about 11", "12").overall
        1.0
        >>> per_row = NS(problem_type="from_row", verifier=None, verifiers={}, reward=spec.reward)
        >>> reward_function_from_spec(per_row, "ocr").verifier_name
        'wer'
    """
    declared = str(spec.problem_type)
    ref = getattr(spec, "verifier", None)
    if declared == FROM_ROW:
        if problem_type is None:
            raise ValueError(
                "this spec routes per row (problem_type: from_row): pass the row's problem_type, "
                "or score with TaskReward"
            )
        ptype = canonical_problem_type(str(problem_type))
        ref = (getattr(spec, "verifiers", None) or {}).get(ptype)
    else:
        ptype = canonical_problem_type(declared)
        if problem_type is not None and canonical_problem_type(str(problem_type)) != ptype:
            raise ValueError(
                f"problem type {str(problem_type)!r} is not the spec's {ptype.value!r}"
            )
    verifier = None if ref is None else (ref.name, ref.version, getattr(ref, "params", None))
    reward = getattr(spec, "reward", None)
    format_rule = "answer_tag" if reward is None else reward.format
    weights = (0.9, 0.1) if reward is None else (reward.weights.accuracy, reward.weights.format)
    answer_source = getattr(reward, "answer_source", "auto")
    return reward_function_for(ptype, verifier, format_rule, weights, answer_source)
