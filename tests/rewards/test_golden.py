"""Golden cases: a careful human grader's verdicts, stored as data, checked against the router.

Each line of ``tests/rewards/golden/<problem_type>.jsonl`` is one :class:`GoldenCase`. The
expectations were written by hand from the reward contract (DESIGN.md "Problem types", issue 3),
independently of the implementation; a failing case means the implementation and the grader
disagree, and the expectation must not be edited to make it pass without a reason.

The held-out files hold model-output-like adversarial cases of every type; there the bar is an
agreement rate of at least 97 % (the peer's two implementations reach 76 % and 73 %):

- ``heldout_adversarial.jsonl`` (106 cases): graded by a second engineer who had seen the
  implementation's first disagreements, so no longer blind;
- ``heldout_blind.jsonl`` (431 cases, all 13 types): written and graded by a third engineer who
  never saw the implementation nor ran the scorer. On its first run the router agreed on 426
  (98.8 %); four of the five disagreements were then fixed (``3 + 4 = 7``, ``{"start", "end"}``,
  ``回答1更好``, ``Response 1, because ...``), and the fifth (an open-ended answer negating the
  gold) by issue 10, which also changed one expectation: ``bl-bool-005``, a lone ``1``, is yes.

``families_issue10.jsonl`` holds the answer families an outside tester found misjudged (issue 10
§2: compatibility forms, Python literals in grounding answers, "not A; it is B", ties through
both responses, booleans, powers / grouped thousands / quantity words / tiny differences,
short answers in a sentence, inequalities vs intervals, an unclosed ``<think>``), several
variants each plus near misses that must stay 0, graded by hand (the implementation before
issue 10 agrees on 99 of the 218). Every one of them must agree.

``families_issue10_round2.jsonl`` holds the families a second, blind outside set still found
misjudged after that (compatibility forms in every type, vulgar fractions, rejections then
commitments in several shapes, corrections, ties and verdicts in critic answers, "certainly
not, <reason>", quantity words such as "a pair of" and "a score of", compounds containing a
short gold, near-copies of a long gold with an opposite action), in wordings of my own, with
near misses and converses that must keep their score (main before this round agrees on 71 of
the 164). Every one of them must agree too.

``families_issue10_round3.jsonl`` holds the two families the second outside set still found
misjudged after round 2: an open-ended short gold stated inside a longer sentence (an action
or a count followed by where, when or with what: "She is cutting vegetables in the kitchen",
"There are five chairs around the table") and set-builder notation for an interval gold
(``\\{x \\mid x > -1\\}``), in wordings of my own, with near misses (negated, hedged, a second
action or count, lists, repeated golds, another domain or bound) that must stay 0. Every one of
them must agree.

``families_issue19.jsonl`` holds the families an outside red team and a fresh graded set found
misjudged after issue 10 (issue 19 §2), each as the attacker wrote it plus siblings of my own and
near misses that must stay 0: several disagreeing ``\\boxed{}`` answers in every type (``boxed``),
booleans stating both verdicts, correcting themselves or negating the verdict word (``bool``),
exponents beyond any value meant (``exp``), an answer stated only inside ``<think>``
(``think``), Qwen's box forms and named coordinates (``box``), time spans without brackets,
start/end lines and subtitle times (``time``), other locales' thousands, sign words, a
concluding sentence and values restated in other units (``num``), Chinese answer markers
(``zh``), markdown around letters and bare letter lists (``mark``), critic comparisons
(``critic``) and counts and Chinese sentences for short open-ended golds (``oe``). Main before
issue 19 agrees on 68 of the 187 (its near misses and controls; on ``fam19-exp-15``,
``5E+123456789`` as a math answer, it hangs inside sympy); every one must agree.

``families_issue19_hedges.jsonl`` holds the hedges the outside red team's third round still
found scored 1 for the answer they name first (issue 19 §2), each as the attacker wrote it plus
siblings of my own and near misses that must keep their score: two letters joined by ``+``,
``vs``, ``或者``, ``还是`` and other joiners (``join``), lists of option statements (``list``),
separators that render as nothing (``invis``), ranges with dots and open ranges in English and
Chinese, and Chinese neighbouring numerals (``num``), ``是或否`` and a verdict for each case
(``bool``), a ``\\boxed{}`` beside the answer block that disagrees with it (``boxbeside``), a
second interval or box under another JSON key or the same key twice (``jsonkey``) and two
values in one box (``math``). Main before the fix agrees on 55 of the 155 (its controls and
near misses); every one must agree.

The two ``outside_issue10_set*.jsonl`` files come from graders outside the team who never read
the verifiers nor ran them, each given only the reward contract and issue 10's family list
(12 types; code is not among them). Set 1 (322 cases) measured the issue: main before it agreed
on 69.9 %, after the first round 94.1 %, after round 2 100 %. Set 2 (300 cases) was written
after round 2 and is the honest first-run figure: 98.3 % (295/300). Its five disagreements are
kept as they were graded (``7.01`` read as the one-decimal gold ``7.0``; two open-ended short
golds inside a longer sentence; a set-builder interval; OCR partial credit for ``Main St.`` vs
``Elm St.``); round 3 fixed the open-ended and set-builder families (99.3 %, 298/300), and the
other two are design choices (the decimal-gold rounding rule, WER partial credit). Both keep
the 97 % bar.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from videorl_kit.core.problem_types import ProblemType, canonical_problem_type
from videorl_kit.core.verifiers import default_verifier_name
from videorl_kit.rewards.router import RewardFunction, reward_function_for
from videorl_kit.testing.cases import CaseFileError, GoldenCase, disagreements
from videorl_kit.testing.cases import load_cases as _load_cases

GOLDEN_DIR = Path(__file__).parent / "golden"
HELDOUT_FILE = GOLDEN_DIR / "heldout_adversarial.jsonl"
BLIND_FILE = GOLDEN_DIR / "heldout_blind.jsonl"
FAMILIES_FILE = GOLDEN_DIR / "families_issue10.jsonl"
FAMILIES_ROUND2_FILE = GOLDEN_DIR / "families_issue10_round2.jsonl"
FAMILIES_ROUND3_FILE = GOLDEN_DIR / "families_issue10_round3.jsonl"
FAMILIES_ISSUE19_FILE = GOLDEN_DIR / "families_issue19.jsonl"
HEDGES_ISSUE19_FILE = GOLDEN_DIR / "families_issue19_hedges.jsonl"
OUTSIDE_SET1_FILE = GOLDEN_DIR / "outside_issue10_set1.jsonl"
OUTSIDE_SET2_FILE = GOLDEN_DIR / "outside_issue10_set2.jsonl"
HELDOUT_MIN_AGREEMENT = 0.97
MIN_CASES_PER_TYPE = 20
#: The types the held-out files were written for (all 13 of issue 3; a type added later brings
#: its own case file, ``<problem_type>.jsonl``).
HELDOUT_TYPES = {
    "multiple_choice", "numerical", "regression", "boolean", "temporal_grounding",
    "spatial_grounding", "spatiotemporal_grounding", "tracking", "ocr", "open_ended", "math",
    "code", "critic",
}  # fmt: skip
MIN_CASES_TOTAL = 400


def load_cases(path: Path) -> list[GoldenCase]:
    """Validate every line of ``path``; raise one error listing every bad line."""
    try:
        return _load_cases(path)
    except CaseFileError as exc:
        raise AssertionError(f"invalid golden cases:\n{exc}") from None


def golden_files() -> list[Path]:
    """The per-problem-type files (``<problem_type>.jsonl``)."""
    mixed = (
        HELDOUT_FILE,
        BLIND_FILE,
        FAMILIES_FILE,
        FAMILIES_ROUND2_FILE,
        FAMILIES_ROUND3_FILE,
        FAMILIES_ISSUE19_FILE,
        HEDGES_ISSUE19_FILE,
        OUTSIDE_SET1_FILE,
        OUTSIDE_SET2_FILE,
    )
    return sorted(p for p in GOLDEN_DIR.glob("*.jsonl") if p not in mixed)


@cache
def _reward_function(problem_type: str, params_json: str) -> RewardFunction:
    params = json.loads(params_json)
    verifier = None
    if params is not None:
        verifier = (default_verifier_name(problem_type), None, params)  # the latest version
    return reward_function_for(problem_type, verifier=verifier)


def grade(case: GoldenCase) -> list[str]:
    """Run ``case`` through the router; return the disagreements (empty when it agrees)."""
    fn = _reward_function(case.problem_type, json.dumps(case.params, sort_keys=True))
    result = fn(case.response, case.answer, case.options)
    problems = disagreements(case, result)  # the case layout and its checks: videorl_kit.testing
    if problems:
        problems.append(f"details={json.dumps(result.details, default=str)[:400]}")
    return problems


def _all_cases() -> list[tuple[str, GoldenCase]]:
    found = []
    for path in golden_files():
        found.extend((f"{path.stem}/{case.id}", case) for case in load_cases(path))
    return found


ALL_CASES = _all_cases()
FAMILY_CASES = [
    case
    for path in (
        FAMILIES_FILE,
        FAMILIES_ROUND2_FILE,
        FAMILIES_ROUND3_FILE,
        FAMILIES_ISSUE19_FILE,
        HEDGES_ISSUE19_FILE,
    )
    for case in load_cases(path)
]


# ------------------------------------------------------------------------------ the data itself


def test_every_file_validates_and_matches_its_problem_type() -> None:
    assert golden_files(), "no golden files"
    ids: set[str] = set()
    for path in golden_files():
        stem = canonical_problem_type(path.stem).value
        for case in load_cases(path):
            assert case.problem_type == stem, f"{path.name}: {case.id} is {case.problem_type}"
            assert case.id not in ids, f"duplicate id {case.id}"
            ids.add(case.id)


def test_case_counts() -> None:
    per_type = Counter(case.problem_type for _, case in ALL_CASES)
    missing = {t.value: per_type.get(t.value, 0) for t in ProblemType}
    too_few = {k: v for k, v in missing.items() if v < MIN_CASES_PER_TYPE}
    assert not too_few, f"problem types with fewer than {MIN_CASES_PER_TYPE} cases: {too_few}"
    assert sum(per_type.values()) >= MIN_CASES_TOTAL


def test_bad_lines_are_reported_with_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "numerical.jsonl"
    good = {
        "id": "x-1",
        "problem_type": "numerical",
        "response": "<answer>1</answer>",
        "answer": "1",
        "expected_accuracy": 1.0,
        "reason": "a valid case",
    }
    lines = [good, {**good, "expected_accuracy": 2}, {**good, "surprise": 1}]
    bad.write_text("\n".join(json.dumps(x) for x in lines) + "\n{not json\n")
    with pytest.raises(AssertionError) as info:
        load_cases(bad)
    message = str(info.value)
    assert "numerical.jsonl:2:" in message and "numerical.jsonl:3:" in message
    assert "numerical.jsonl:4:" in message and "numerical.jsonl:1:" not in message


# ------------------------------------------------------------------------------ agreement


@pytest.mark.parametrize("case", [c for _, c in ALL_CASES], ids=[i for i, _ in ALL_CASES])
def test_golden_case(case: GoldenCase) -> None:
    problems = grade(case)
    assert not problems, f"{case.id} ({case.reason}): " + "; ".join(problems)


@pytest.mark.parametrize("case", FAMILY_CASES, ids=[c.id for c in FAMILY_CASES])
def test_family_case(case: GoldenCase) -> None:
    problems = grade(case)
    assert not problems, f"{case.id} ({case.reason}): " + "; ".join(problems)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (FAMILIES_FILE, {"width", "pylit", "reject", "tie", "bool", "num", "oe", "math", "think"}),
        (FAMILIES_ROUND2_FILE, {"width", "reject", "tie", "bool", "num", "oe"}),
        (FAMILIES_ROUND3_FILE, {"oe", "math"}),
        (
            FAMILIES_ISSUE19_FILE,
            {"boxed", "bool", "exp", "think", "box", "time", "num", "zh", "mark", "critic", "oe"},
        ),
        (
            HEDGES_ISSUE19_FILE,
            {"join", "list", "invis", "num", "bool", "boxbeside", "jsonkey", "math"},
        ),
    ],
    ids=["round1", "round2", "round3", "issue19", "issue19-hedges"],
)
def test_issue10_families_cover_every_family_with_near_misses(
    path: Path, expected: set[str]
) -> None:
    cases = load_cases(path)
    families = Counter(case.id.rsplit("-", 1)[0] for case in cases)
    assert {f.split("-", 1)[1] for f in families} == expected
    assert min(families.values()) >= 9, families
    zeros = Counter(c.id.rsplit("-", 1)[0] for c in cases if c.expected_accuracy == 0.0)
    assert set(zeros) == set(families), "every family needs near misses that must stay 0"


@pytest.mark.parametrize(
    ("path", "min_cases", "types"),
    [
        (HELDOUT_FILE, 100, HELDOUT_TYPES),
        (BLIND_FILE, 400, HELDOUT_TYPES),
        (OUTSIDE_SET1_FILE, 300, HELDOUT_TYPES - {"code"}),
        (OUTSIDE_SET2_FILE, 300, HELDOUT_TYPES - {"code"}),
    ],
)
def test_heldout_agreement_is_at_least_97_percent(
    path: Path, min_cases: int, types: set[str]
) -> None:
    cases = load_cases(path)
    per_type = Counter(case.problem_type for case in cases)
    assert set(per_type) == types, f"types covered: {sorted(per_type)}"
    assert len(cases) >= min_cases
    assert len({case.id for case in cases}) == len(cases), "duplicate ids"
    disagreements = []
    for case in cases:
        problems = grade(case)
        if problems:
            disagreements.append(f"{case.id} [{case.reason}] " + "; ".join(problems))
    agreement = 1 - len(disagreements) / len(cases)
    assert agreement >= HELDOUT_MIN_AGREEMENT, (
        f"agreement {agreement:.1%} < {HELDOUT_MIN_AGREEMENT:.0%} on {len(cases)} cases of "
        f"{path.name}; "
        "disagreements:\n" + "\n".join(disagreements)
    )


# ------------------------------------------------------------------------------ the CLI


def test_cli_reward_score_json_matches_the_golden_file(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from videorl_kit.cli import app

    cases = [c for c in load_cases(GOLDEN_DIR / "multiple_choice.jsonl") if c.params is None]
    rows = []
    for case in cases:
        row: dict[str, Any] = {
            "problem_type": case.problem_type,
            "response": case.response,
            "answer": case.answer,
        }
        if case.options is not None:
            row["options"] = case.options
        rows.append(row)
    data = tmp_path / "mc.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    result = CliRunner().invoke(app, ["reward", "score", str(data), "--json"])
    assert result.exit_code == 0, result.output
    text = result.stdout.strip()
    if text.startswith("["):
        outputs = json.loads(text)
    else:
        outputs = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert len(outputs) == len(cases)
    for case, out in zip(cases, outputs, strict=True):
        assert {"accuracy", "format", "overall", "status", "details"} <= set(out)
        direct = _reward_function(case.problem_type, "null")(
            case.response, case.answer, case.options
        )
        assert out["accuracy"] == pytest.approx(direct.accuracy), case.id
        assert out["format"] == pytest.approx(direct.format), case.id
        assert out["overall"] == pytest.approx(direct.overall), case.id
        assert out["status"] == direct.status, case.id
