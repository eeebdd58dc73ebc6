"""Reward throughput and worst-case latency, per problem type, on one core.

Usage::

    python benchmarks/bench_rewards.py            # 10,000 responses per type
    python benchmarks/bench_rewards.py --n 2000 --json

For every problem type a seeded generator makes ``--n`` mixed responses (correct, wrong, hedged,
untagged, long reasoning) in groups of ``--group-size`` (8) sharing a ground truth, as the
rollouts of one prompt do in GRPO training (the group-relative advantage needs n >= 2 per
prompt; 8 is the usual n). ``--group-size 1`` gives every response a ground truth of its own,
the worst case for the verifiers' caches of parsed ground truths. They are scored one by one
in this process (pinned to one CPU where the OS allows) and the rate is reported in responses
per second, the best of ``--repeat`` fresh sets (background load on a shared machine only
slows a set down). Then every type is fed adversarial inputs of ``--adversarial-bytes``
(1 MB by default: repeated ``<answer>``, digits, nested braces, ``A or``, unterminated tags,
...) and the worst time per response (each input's fastest of ``--repeat`` tries) is reported.

Targets (floors of issue 12; the peer's implementations score 1,800-3,200 mixed cases/s on
the same machine): >= 10,000 responses/s for choice, numeric, boolean and the IoU types;
>= 300/s for math; no response over 50 ms except code execution, which runs a subprocess per
response and is reported separately with fewer samples (``--code-n``).

The script prints a table with PASS/FAIL per target; ``--strict`` makes it exit 1 on a FAIL.

``--baseline DIR`` compares this checkout with another one (a worktree of main, say) side by
side in one run: for each type, this script runs in a child process once with each checkout
on ``PYTHONPATH``, alternating ``--rounds`` times; the best figures of each are printed with
their ratio (this checkout / baseline; above 1 is faster).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from videorl_kit.core.problem_types import ProblemType
from videorl_kit.rewards.router import reward_function_for

#: Minimum responses per second, by problem type (None: no throughput target).
RATE_TARGETS: dict[ProblemType, float | None] = {
    ProblemType.MULTIPLE_CHOICE: 10_000,
    ProblemType.NUMERICAL: 10_000,
    ProblemType.REGRESSION: 10_000,
    ProblemType.BOOLEAN: 10_000,
    ProblemType.TEMPORAL_GROUNDING: 10_000,
    ProblemType.SPATIAL_GROUNDING: 10_000,
    ProblemType.SPATIOTEMPORAL_GROUNDING: 10_000,
    ProblemType.TRACKING: 10_000,
    ProblemType.OCR: None,
    ProblemType.OPEN_ENDED: None,
    ProblemType.MATH: 300,
    ProblemType.CRITIC: None,
    ProblemType.CODE: None,
}
GOLDEN_DIR = Path(__file__).resolve().parents[1] / "tests" / "rewards" / "golden"
#: Worst time for one response on adversarial input, seconds (code is exempt).
WORST_CASE_TARGET_S = 0.050

Sample = tuple[str, str, list[str] | None]

_REASONING = (
    "Let me watch the clip again. At the start a person walks in from the left, "
    "then picks something up near the table and turns around. "
)


@dataclass
class TypeReport:
    """Figures for one problem type."""

    problem_type: str
    n: int
    seconds: float
    rate_per_s: float
    rate_target: float | None
    rate_pass: bool | None
    adversarial_inputs: int
    worst_s: float
    worst_input: str
    worst_target_s: float | None
    worst_pass: bool | None
    mean_accuracy: float


# ------------------------------------------------------------------------------ generators


class GroupRandom(random.Random):
    """The random stream of one response; ``gold`` is its group's stream for the ground truth.

    Generators draw everything about the ground truth from ``rng.gold`` and everything about
    the response from ``rng`` itself, so responses of one group share their ground truth (and
    its options) and differ in what the model wrote, as the rollouts of one GRPO prompt do.
    """

    def __init__(self, seed: str, gold: random.Random) -> None:
        super().__init__(seed)
        self.gold = gold


def generate(problem_type: ProblemType, n: int, group_size: int, seed: str) -> list[Sample]:
    """``n`` responses of ``problem_type`` in groups of ``group_size`` sharing a ground truth.

    A type without a generator here (one added since, docs/extending.md) is timed on its
    golden cases, repeated to ``n`` responses.
    """
    if problem_type not in GENERATORS:
        return golden_samples(problem_type, n)
    samples: list[Sample] = []
    group = 0
    while len(samples) < n:
        for member in range(min(group_size, n - len(samples))):
            gold_stream = random.Random(f"{seed}-gold-{group}")  # the same for every member
            rng = GroupRandom(f"{seed}-{group}-{member}", gold_stream)
            samples.append(GENERATORS[problem_type](rng))
        group += 1
    return samples


def golden_samples(problem_type: ProblemType, n: int) -> list[Sample]:
    """The cases of ``tests/rewards/golden/<problem_type>.jsonl``, repeated to ``n``."""
    cases = [
        json.loads(line)
        for line in (GOLDEN_DIR / f"{problem_type.value}.jsonl").read_text().splitlines()
        if line.strip()
    ]
    samples = [(c["response"], c["answer"], c.get("options")) for c in cases]
    return [samples[i % len(samples)] for i in range(n)]


def _wrap(rng: random.Random, answer: str, wrong: str) -> str:
    """One response around ``answer``: correct/wrong, tagged/untagged, hedged, long."""
    kind = rng.random()
    think = f"<think>{_REASONING * rng.randint(1, 3)}</think>"
    if kind < 0.35:
        return f"{think}<answer>{answer}</answer>"
    if kind < 0.55:
        return f"{think}<answer>{wrong}</answer>"
    if kind < 0.65:
        return f"<answer>{answer} or {wrong}</answer>"
    if kind < 0.75:
        return f"<answer>{answer}</answer><answer>{wrong}</answer>"
    if kind < 0.88:
        return f"{_REASONING}So the final answer is {answer}."
    return f"{_REASONING * rng.randint(5, 20)}<answer>{answer}</answer>"


def _box(rng: random.Random, scale: int = 640) -> list[int]:
    x1, y1 = rng.randint(0, scale // 2), rng.randint(0, scale // 2)
    return [x1, y1, x1 + rng.randint(5, scale // 2), y1 + rng.randint(5, scale // 2)]


def _jitter(rng: random.Random, box: list[int]) -> list[int]:
    dx, dy = rng.randint(-20, 20), rng.randint(-20, 20)
    return [box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy]


def _gen_choice(rng: GroupRandom) -> Sample:
    letters = "ABCDE"
    gold = rng.gold.choice(letters)
    wrong = rng.choice([x for x in letters if x != gold])
    options = [f"{x}. option {x.lower()}" for x in letters]
    answer = rng.choice([gold, f"({gold})", f"{gold}. option {gold.lower()}"])
    return _wrap(rng, answer, wrong), gold, options


def _gen_numeric(rng: GroupRandom) -> Sample:
    gold = rng.gold.randint(0, 5000)
    answer = rng.choice([str(gold), f"{gold:,}", f"{gold}.0", f"about {gold} items"])
    return _wrap(rng, answer, str(gold + rng.randint(1, 9))), str(gold), None


def _gen_regression(rng: GroupRandom) -> Sample:
    gold = round(rng.gold.uniform(0.5, 20.0), 2)
    pred = round(gold * rng.uniform(0.5, 1.5), 2)
    return _wrap(rng, f"{pred} m", str(round(gold * 3, 2))), str(gold), None


def _gen_boolean(rng: GroupRandom) -> Sample:
    gold = rng.gold.choice(["yes", "no"])
    other = "no" if gold == "yes" else "yes"
    answer = rng.choice([gold, gold.capitalize(), f"{gold.capitalize()}, it is."])
    return _wrap(rng, answer, other), gold, None


def _gen_temporal(rng: GroupRandom) -> Sample:
    start = round(rng.gold.uniform(0, 100), 1)
    gold = [start, round(start + rng.gold.uniform(1, 30), 1)]
    pred = [round(gold[0] + rng.uniform(-5, 5), 1), round(gold[1] + rng.uniform(-5, 5), 1)]
    answer = rng.choice(
        [json.dumps({"time": pred}), f"from {pred[0]} to {pred[1]} seconds", json.dumps(pred)]
    )
    wrong = json.dumps({"time": [gold[1] + 10, gold[1] + 20]})
    return _wrap(rng, answer, wrong), json.dumps({"time": gold}), None


def _gen_spatial(rng: GroupRandom) -> Sample:
    gold = _box(rng.gold)
    answer = json.dumps({"boxes": _jitter(rng, gold)})
    return _wrap(rng, answer, json.dumps({"boxes": _box(rng)})), json.dumps({"boxes": gold}), None


def _gen_spatiotemporal(rng: GroupRandom) -> Sample:
    start = rng.gold.randint(0, 20)
    end = start + rng.gold.randint(1, 8)
    boxes = {str(s): _box(rng.gold) for s in range(start, end + 1)}
    pred_boxes = {k: _jitter(rng, v) for k, v in boxes.items() if rng.random() < 0.8}
    gold = {"time": [start, end], "boxes": boxes}
    pred = {"time": [start, end + rng.randint(0, 2)], "boxes": pred_boxes}
    wrong = {"time": [end + 5, end + 9], "boxes": {}}
    return _wrap(rng, json.dumps(pred), json.dumps(wrong)), json.dumps(gold), None


def _gen_tracking(rng: GroupRandom) -> Sample:
    seconds = rng.gold.randint(2, 32)
    boxes = {str(s): _box(rng.gold) for s in range(1, seconds + 1)}
    pred = {k: _jitter(rng, v) for k, v in boxes.items() if rng.random() < 0.8}
    answer = json.dumps({"boxes": pred})
    return _wrap(rng, answer, json.dumps({"boxes": {}})), json.dumps({"boxes": boxes}), None


_WORDS = [
    "stop",
    "exit",
    "open",
    "closed",
    "main",
    "street",
    "sale",
    "market",
    "hotel",
    "bank",
    "station",
    "north",
]


def _gen_ocr(rng: GroupRandom) -> Sample:
    gold = " ".join(rng.gold.choice(_WORDS) for _ in range(rng.gold.randint(1, 8))).upper()
    pred = " ".join(w if rng.random() < 0.8 else rng.choice(_WORDS) for w in gold.split())
    return _wrap(rng, pred.title(), "garbage text"), gold, None


_SENTENCE = [
    "a",
    "person",
    "walks",
    "into",
    "the",
    "kitchen",
    "and",
    "opens",
    "the",
    "fridge",
    "to",
    "take",
    "out",
    "some",
    "milk",
]


def _gen_open_ended(rng: GroupRandom) -> Sample:
    if rng.gold.random() < 0.5:
        gold = rng.gold.choice(["kitchen", "red car", "the dog", "paris"])
        return _wrap(rng, gold.title(), "bedroom"), gold, None
    gold = " ".join(_SENTENCE[: rng.gold.randint(6, len(_SENTENCE))])
    pred = " ".join(w for w in gold.split() if rng.random() < 0.8)
    return _wrap(rng, pred, "something else happens"), gold, None


def _gen_math(rng: GroupRandom) -> Sample:
    """A MATH-like mix of answer shapes, each with an equivalent form of the gold as the answer.

    Roughly the shapes of competition-math answers: mostly integers, then fractions, radicals,
    multiples of pi, expressions, intervals, tuples and decimals, and one in ten of other
    shapes (sums with roots, powers of e, sets, logarithms). Plain rationals are decided by
    ``videorl_kit.rewards.math_exact``, everything else by math-verify.
    """
    a, b = rng.gold.randint(1, 50), rng.gold.randint(2, 50)
    kind = rng.gold.random()
    if kind < 0.40:
        gold = str(a * b)
        answer = rng.choice([gold, f"\\boxed{{{gold}}}", f"{gold}.0", f"${gold}$"])
    elif kind < 0.55:
        gold = f"\\frac{{{a}}}{{{b}}}"
        answer = rng.choice([f"\\dfrac{{{a}}}{{{b}}}", f"{a}/{b}", f"\\frac{{{2 * a}}}{{{2 * b}}}"])
    elif kind < 0.65:
        gold, answer = f"{a}\\sqrt{{{b}}}", f"\\sqrt{{{a * a * b}}}"
    elif kind < 0.70:
        gold = f"\\frac{{{a}\\pi}}{{{b}}}"
        answer = rng.choice([f"\\frac{{{a}}}{{{b}}}\\pi", f"{a}\\pi/{b}"])
    elif kind < 0.75:
        gold = f"{a}x+{b}" if rng.gold.random() < 0.5 else f"x^2-{a * a}"
        answer = f"{b}+{a}x" if gold.endswith(f"+{b}") else f"(x-{a})(x+{a})"
    elif kind < 0.80:
        gold = f"(-\\infty, {a}]"
        answer = rng.choice([f"(-\\infty,{a}]", f"\\left(-\\infty, {a}\\right]"])
    elif kind < 0.85:
        gold, answer = f"({a}, {b})", rng.choice([f"({a},{b})", f"\\left({a}, {b}\\right)"])
    elif kind < 0.90:
        gold, answer = f"{a}.25", rng.choice([f"{a}.250", f"\\frac{{{4 * a + 1}}}{{4}}"])
    else:  # other shapes: math-verify's symbolic comparison decides
        gold, answer = rng.gold.choice(
            [
                (f"\\frac{{\\sqrt{{{b}}}}}{{{a}}}", f"\\frac{{1}}{{{a}}}\\sqrt{{{b}}}"),
                (f"{a}+\\sqrt{{{b}}}", f"\\sqrt{{{b}}}+{a}"),
                (f"e^{{{b}}}", f"e^{b}"),
                (f"\\{{{a}, {a + b}\\}}", f"\\{{{a + b}, {a}\\}}"),
                (f"\\log_{{2}} {2 ** (b % 10)}", str(b % 10)),
            ]
        )
    return _wrap(rng, answer, str(a + b)), gold, None


def _gen_critic(rng: GroupRandom) -> Sample:
    gold = rng.gold.choice(["Response 1", "Response 2", "Tie"])
    other = "Response 2" if gold != "Response 2" else "Response 1"
    answer = rng.choice([gold, f"{gold} is better", gold.lower()]) if gold != "Tie" else "Tie"
    return _wrap(rng, answer, other), gold, None


def _gen_code(rng: GroupRandom) -> Sample:
    k = rng.gold.randint(1, 9)
    gold = json.dumps(
        {"entry_point": "f", "tests": [f"assert f({i}) == {i * k}" for i in range(5)]}
    )
    good = f"```python\ndef f(x):\n    return x * {k}\n```"
    bad = f"```python\ndef f(x):\n    return x + {k}\n```"
    return _wrap(rng, good, bad), gold, None


GENERATORS: dict[ProblemType, Callable[[random.Random], Sample]] = {
    ProblemType.MULTIPLE_CHOICE: _gen_choice,
    ProblemType.NUMERICAL: _gen_numeric,
    ProblemType.REGRESSION: _gen_regression,
    ProblemType.BOOLEAN: _gen_boolean,
    ProblemType.TEMPORAL_GROUNDING: _gen_temporal,
    ProblemType.SPATIAL_GROUNDING: _gen_spatial,
    ProblemType.SPATIOTEMPORAL_GROUNDING: _gen_spatiotemporal,
    ProblemType.TRACKING: _gen_tracking,
    ProblemType.OCR: _gen_ocr,
    ProblemType.OPEN_ENDED: _gen_open_ended,
    ProblemType.MATH: _gen_math,
    ProblemType.CRITIC: _gen_critic,
    ProblemType.CODE: _gen_code,
}


def adversarial_inputs(size: int) -> Iterator[tuple[str, str]]:
    """``(name, text)`` pairs of about ``size`` characters each."""

    def fill(unit: str) -> str:
        return unit * max(1, size // len(unit))

    yield "answer_tags", fill("<answer>")
    yield "answer_blocks", fill("<answer>1</answer>")
    yield "digits", fill("9")
    yield "nested_braces", fill("{")
    yield "nested_brackets", fill("[")
    yield "a_or", fill("A or ")
    yield "unterminated_think", "<think>" + fill("x ")
    yield "boxed", fill("\\boxed{")
    yield "numbers_list", fill("1, ")
    yield "json_time", fill('{"time": [')
    yield "ranges", fill("from 10 to 20 seconds ")
    yield "final_statements", fill("The answer is ")
    yield "responses", fill("Response 1 and ")
    yield "long_answer", "<answer>" + fill("word ") + "</answer>"
    yield "whitespace", fill(" \n\t")
    yield "latex", fill("\\frac{1}{")
    yield "unicode", fill("é答")
    yield "special_tokens", fill("<|video_pad|>")
    yield "full_width", "<answer>" + fill("Ｂ１") + "</answer>"
    yield "superscripts", "<answer>" + fill("2³ ") + "</answer>"
    yield "vulgar_fractions", "<answer>" + fill("3½ ") + "</answer>"
    yield "rejections", "<answer>" + fill("not (A); ") + "</answer>"
    yield "corrections", "<answer>" + fill("A? No, ") + "</answer>"
    yield "quantity_words", "<answer>" + fill("a pair of a score of ") + "</answer>"
    yield "opposites", "<answer>" + fill("opens closes left right ") + "</answer>"


# ------------------------------------------------------------------------------ measuring


@contextlib.contextmanager
def one_core() -> Iterator[str]:
    """Pin this process to one CPU for the duration (restored afterwards)."""
    getter = getattr(os, "sched_getaffinity", None)
    setter = getattr(os, "sched_setaffinity", None)
    if getter is None or setter is None:
        yield "not pinned (no sched_setaffinity)"
        return
    before = getter(0)
    cpu = min(before)
    try:
        setter(0, {cpu})
    except OSError:
        yield "not pinned (sched_setaffinity refused)"
        return
    try:
        yield f"pinned to CPU {cpu}"
    finally:
        with contextlib.suppress(OSError):
            setter(0, before)


def measure_type(
    problem_type: ProblemType,
    n: int,
    adversarial_size: int,
    seed: int,
    repeat: int = 1,
    group_size: int = 1,
) -> TypeReport:
    """Throughput over ``n`` generated responses, then the worst adversarial latency.

    With ``repeat > 1`` the throughput is measured on ``repeat`` fresh sets of ``n`` responses
    (new ground truths each time, so no cache carries over) and the fastest set counts, as
    ``timeit`` takes the best of its repeats: background load only ever slows a run down.
    Each adversarial input is likewise timed ``repeat`` times and its fastest try counts.
    """
    fn = reward_function_for(problem_type)
    seconds, total = float("inf"), 0.0
    for attempt in range(max(1, repeat)):
        samples = generate(problem_type, n, group_size, f"{seed}-{problem_type.value}-{attempt}")
        fn(*samples[0])  # warm-up: lazy imports and caches of the verifier module
        accuracy = 0.0
        started = time.perf_counter()
        for response, answer, options in samples:
            accuracy += fn(response, answer, options).accuracy
        elapsed = time.perf_counter() - started
        if elapsed < seconds:
            seconds, total = elapsed, accuracy
    gold = samples[0][1]
    options = samples[0][2]
    worst, worst_name, count = 0.0, "", 0
    inputs = list(adversarial_inputs(adversarial_size))
    if problem_type is ProblemType.CODE:
        inputs = inputs[:3]  # a sandboxed subprocess each; reported separately
    for name, text in inputs:
        elapsed = float("inf")
        for _ in range(max(1, repeat)):  # the fastest try: a scheduler hiccup is not the input's
            t0 = time.perf_counter()
            fn(text, gold, options)
            elapsed = min(elapsed, time.perf_counter() - t0)
        count += 1
        if elapsed > worst:
            worst, worst_name = elapsed, name
    rate = n / seconds if seconds > 0 else float("inf")
    target = RATE_TARGETS.get(problem_type)
    worst_target = None if problem_type is ProblemType.CODE else WORST_CASE_TARGET_S
    return TypeReport(
        problem_type=problem_type.value,
        n=n,
        seconds=round(seconds, 4),
        rate_per_s=round(rate, 1),
        rate_target=target,
        rate_pass=None if target is None else rate >= target,
        adversarial_inputs=count,
        worst_s=round(worst, 5),
        worst_input=worst_name,
        worst_target_s=worst_target,
        worst_pass=None if worst_target is None else worst <= worst_target,
        mean_accuracy=round(total / n, 4) if n else 0.0,
    )


def _verdict(value: bool | None) -> str:
    return "-" if value is None else ("PASS" if value else "FAIL")


def render_table(reports: list[TypeReport], pinning: str) -> str:
    """Plain-text table of the figures and PASS/FAIL per target."""
    header = (
        f"{'problem type':<26} {'n':>6} {'resp/s':>11} {'target':>8} {'':>5} "
        f"{'worst ms':>9} {'target':>7} {'':>5}  worst input"
    )
    lines = [f"reward benchmark ({pinning}; Python {platform.python_version()})", header]
    lines.append("-" * len(header))
    for r in reports:
        rate_target = "-" if r.rate_target is None else f">={r.rate_target:,.0f}"
        worst_target = "exempt" if r.worst_target_s is None else f"<={r.worst_target_s * 1e3:.0f}"
        lines.append(
            f"{r.problem_type:<26} {r.n:>6} {r.rate_per_s:>11,.0f} {rate_target:>8} "
            f"{_verdict(r.rate_pass):>5} {r.worst_s * 1e3:>9.2f} {worst_target:>7} "
            f"{_verdict(r.worst_pass):>5}  {r.worst_input}"
        )
    return "\n".join(lines)


CHECKOUT = Path(__file__).resolve().parents[1]


def _child_reports(checkout: Path, args: list[str]) -> dict[str, dict]:
    """Run this script with ``checkout`` first on ``PYTHONPATH``; its reports by type."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args, "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {r["problem_type"]: r for r in json.loads(out)["reports"]}


def compare(baseline: Path, types: list[ProblemType], args: list[str], rounds: int) -> str:
    """This checkout against ``baseline``, side by side: best of ``rounds`` alternated runs
    (the highest rate and the lowest worst-case time of each)."""
    runs: dict[tuple[str, str], list[dict]] = {}
    for ptype in types:
        for _ in range(max(1, rounds)):
            for name, checkout in (("change", CHECKOUT), ("baseline", baseline)):
                report = _child_reports(checkout, [*args, "--types", ptype.value])[ptype.value]
                runs.setdefault((name, ptype.value), []).append(report)
    header = (
        f"{'problem type':<26} {'change/s':>10} {'baseline/s':>11} {'ratio':>6} "
        f"{'worst ms':>9} {'baseline':>9}"
    )
    lines = [f"this checkout against {baseline} (best of {rounds} alternated runs)", header]
    for ptype in types:
        new, old = runs[("change", ptype.value)], runs[("baseline", ptype.value)]
        new_rate = max(r["rate_per_s"] for r in new)
        old_rate = max(r["rate_per_s"] for r in old)
        lines.append(
            f"{ptype.value:<26} {new_rate:>10,.0f} {old_rate:>11,.0f} "
            f"{new_rate / old_rate if old_rate else float('nan'):>6.2f} "
            f"{min(r['worst_s'] for r in new) * 1e3:>9.2f} "
            f"{min(r['worst_s'] for r in old) * 1e3:>9.2f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; returns the exit code (1 only with ``--strict`` and a FAIL)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="responses per problem type")
    parser.add_argument("--code-n", type=int, default=40, help="responses for code execution")
    parser.add_argument(
        "--adversarial-bytes", type=int, default=1_000_000, help="size of each adversarial input"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--repeat", type=int, default=3, help="fresh response sets per type; the fastest counts"
    )
    parser.add_argument(
        "--group-size",
        type=int,
        default=8,
        help="responses sharing one ground truth, as in a GRPO group (1: every gold is new)",
    )
    parser.add_argument(
        "--types", nargs="*", default=None, help="problem types to run (default: all)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target fails")
    parser.add_argument(
        "--baseline", type=Path, default=None, help="another checkout to compare with, side by side"
    )
    parser.add_argument("--rounds", type=int, default=2, help="alternated runs with --baseline")
    args = parser.parse_args(argv)
    types = [ProblemType(t) for t in args.types] if args.types else list(ProblemType)
    if args.baseline is not None:
        child_args = ["--n", str(args.n), "--code-n", str(args.code_n), "--seed", str(args.seed)]
        child_args += ["--adversarial-bytes", str(args.adversarial_bytes)]
        child_args += ["--repeat", str(args.repeat), "--group-size", str(args.group_size)]
        print(compare(args.baseline.resolve(), types, child_args, args.rounds))
        return 0
    reports = []
    with one_core() as pinned:
        pinning = f"{pinned}; group size {max(1, args.group_size)}; best of {args.repeat}"
        for ptype in types:
            code = ptype is ProblemType.CODE
            n = args.code_n if code else args.n
            repeat = 1 if code else args.repeat
            reports.append(
                measure_type(
                    ptype, n, args.adversarial_bytes, args.seed, repeat, max(1, args.group_size)
                )
            )
    if args.json:
        print(json.dumps({"pinning": pinning, "reports": [asdict(r) for r in reports]}, indent=2))
    else:
        print(render_table(reports, pinning))
    failed = [r for r in reports if r.rate_pass is False or r.worst_pass is False]
    return 1 if (args.strict and failed) else 0


if __name__ == "__main__":
    sys.exit(main())
