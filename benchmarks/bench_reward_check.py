"""How long ``videorl-kit reward check`` takes, per built-in verifier, and how slow 1 MB is.

Usage::

    python benchmarks/bench_reward_check.py                 # every built-in, 100 examples
    python benchmarks/bench_reward_check.py --types numerical boolean --examples 20 --json

For each problem type, its default verifier is checked against the whole contract
(:func:`videorl_kit.testing.check_verifier`, the command's own code, with a fixed ``--seed``)
at the command's default number of examples and time budget. Printed per verifier: the wall
time of the whole check (target: under a minute for a simple verifier, issue 23), how many
properties held / broke / were skipped, and the slowest 1 MB flood of ``bounded_time`` (the
fastest of its tries; the budget is 50 ms). A broken property is what ``reward check`` finds
on this checkout (tests/rewards/known_failing.py lists the known ones), not a benchmark error.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass

from videorl_kit.core.problem_types import ProblemType, canonical_problem_type
from videorl_kit.core.verifiers import default_verifier_name
from videorl_kit.testing import check_verifier
from videorl_kit.testing.check import DEFAULT_EXAMPLES, DEFAULT_TIME_BUDGET_S

#: Wall seconds a whole check of a simple verifier may take at the default examples.
TARGET_S = 60.0


@dataclass
class Row:
    """One verifier's check: wall time, outcome counts and its slowest long input."""

    problem_type: str
    verifier: str
    seconds: float
    held: int
    broken: list[str]
    skipped: int
    slowest_long_input: str


def bench(ptype: ProblemType, examples: int, seed: int, budget_s: float) -> Row:
    """Check the default verifier of ``ptype`` against the whole contract, timed.

    Example:
        >>> row = bench(ProblemType.BOOLEAN, examples=2, seed=0, budget_s=10.0)
        >>> row.verifier, row.seconds > 0
        ('boolean@2', True)
    """
    started = time.perf_counter()
    report = check_verifier(
        default_verifier_name(ptype),
        problem_type=ptype.value,
        examples=examples,
        seed=seed,
        time_budget_s=budget_s,
    )
    seconds = time.perf_counter() - started
    timing = report.get("bounded_time")
    return Row(
        ptype.value,
        report.verifier,
        round(seconds, 2),
        sum(p.status == "held" for p in report.properties),
        [p.name for p in report.properties if p.status == "broken"],
        sum(p.status == "skipped" for p in report.properties),
        timing.message,
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print a table (or ``--json``); exit 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--types", nargs="*", default=None, help="problem types (default: all)")
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget-ms", type=float, default=DEFAULT_TIME_BUDGET_S * 1000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    types = [canonical_problem_type(t) for t in args.types] if args.types else list(ProblemType)
    rows = [bench(t, args.examples, args.seed, args.budget_ms / 1000) for t in types]
    if args.json:
        print(json.dumps({"examples": args.examples, "rows": [asdict(r) for r in rows]}))
        return 0
    print(f"reward check, {args.examples} examples, seed {args.seed}, budget {args.budget_ms} ms")
    for r in rows:
        within = "PASS" if r.seconds < TARGET_S else "over 1 min"
        print(
            f"{r.problem_type:26} {r.verifier:22} {r.seconds:7.2f} s {within:10} "
            f"held {r.held:2} broken {r.broken or '-'} skipped {r.skipped}  {r.slowest_long_input}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
