"""Which exact fast paths the ``math`` verifier needs: a profile of a GRPO scoring workload.

Usage::

    python benchmarks/profile_math.py            # 800 responses per workload
    python benchmarks/profile_math.py --n 2000

Two workloads, each in GRPO groups of 8 responses sharing a ground truth, with the responses
of ``bench_rewards.py`` (tagged, untagged, hedged, long reasoning, right and wrong answers):

* ``synthetic``: the golds of the synthetic math task (``videorl_kit.synth``: the value of an
  arithmetic expression shown in the clip);
* ``math-like``: ``bench_rewards.py``'s mix of competition-math answer shapes (integers,
  fractions, radicals, multiples of pi, polynomials, intervals, tuples, decimals, others).

For each, in one run: the share of responses the exact path
(:mod:`videorl_kit.rewards.math_exact`) decides, and the rate with it and without it (every
response through math-verify), side by side, with the ratio. The exact path stays where
math-verify alone would not meet the floor of 300 responses/s with a margin.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import bench_rewards  # the sibling script (python puts this folder first on sys.path)

from videorl_kit.core.problem_types import ProblemType
from videorl_kit.rewards import math as math_verifier
from videorl_kit.rewards.router import reward_function_for
from videorl_kit.synth.tasks_reading import math_expression

Sample = bench_rewards.Sample


def synthetic_samples(n: int, seed: str) -> list[Sample]:
    """``n`` responses in groups of 8 on golds of the synthetic math task."""
    samples: list[Sample] = []
    for group in range(0, n, 8):
        rng = bench_rewards.GroupRandom(f"{seed}-{group}", random.Random(f"{seed}-{group}"))
        _, value = math_expression(rng.gold, 2 + group // 8 % 2)
        gold = str(value)
        for _ in range(min(8, n - group)):
            answer = rng.choice([gold, f"\\boxed{{{gold}}}", f"{gold}.0", str(value + 1)])
            samples.append((bench_rewards._wrap(rng, answer, str(value + 2)), gold, None))
    return samples


def _rate(samples: list[Sample]) -> tuple[float, float]:
    """Responses per second over ``samples`` (best of two passes, gold cache emptied before
    each), and the share the exact path decided."""
    fn = reward_function_for(ProblemType.MATH)
    best, fast = 0.0, 0
    for _ in range(2):
        math_verifier._gold_cache.clear()
        started = time.perf_counter()
        results = [fn(*sample) for sample in samples]
        best = max(best, len(samples) / (time.perf_counter() - started))
        fast = sum(1 for r in results if r.details.get("fast_path"))
    return best, fast / len(samples)


def _without_exact_path(run: Callable[[], tuple[float, float]]) -> tuple[float, float]:
    saved = math_verifier.exact_verdict, math_verifier.in_exact_family
    math_verifier.exact_verdict = lambda gold, pred: None
    math_verifier.in_exact_family = lambda text: False
    try:
        return run()
    finally:
        math_verifier.exact_verdict, math_verifier.in_exact_family = saved


def main(argv: list[str] | None = None) -> int:
    """Print the profile table.

    Example:
        >>> main(["--n", "16"])  # doctest: +ELLIPSIS
        workload ...
        0
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=800, help="responses per workload")
    args = parser.parse_args(argv)
    workloads = {
        "synthetic": synthetic_samples(args.n, "synthetic"),
        "math-like": bench_rewards.generate(ProblemType.MATH, args.n, 8, "math-like"),
    }
    reward_function_for(ProblemType.MATH)(*workloads["math-like"][-1])  # import math-verify
    print(f"{'workload':<10} {'exact share':>11} {'with exact/s':>13} {'math-verify/s':>14} ratio")
    for name, samples in workloads.items():
        with_exact, share = _rate(samples)
        alone, _ = _without_exact_path(lambda samples=samples: _rate(samples))
        print(
            f"{name:<10} {share:>11.0%} {with_exact:>13,.0f} {alone:>14,.0f} "
            f"{with_exact / alone:.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
