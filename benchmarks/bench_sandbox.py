"""Benchmark: time per code-reward case, isolated sandbox against the ways it can be run.

Usage::

    python benchmarks/bench_sandbox.py                # every way and test form, side by side
    python benchmarks/bench_sandbox.py --old-sandbox /path/to/old/videorl_kit/rewards/sandbox.py
    python benchmarks/bench_sandbox.py --json

Cases are the shipped ``synth-code`` task (five function templates, four or five asserts each)
with a correct answer and a wrong one. Every way of running is timed on the same cases, round
robin, so the figures are side by side in one run:

* ``in_process``: ``exec`` of the answer and its asserts in this process, no isolation at all
  (the floor: what the checking itself costs);
* ``old``: the previous audit-hook sandbox's ``run_python_tests`` (only with ``--old-sandbox``);
* ``subprocess``: ``code_exec`` with ``isolation: subprocess`` (verdict on the host, a plain
  child process);
* ``bubblewrap``: ``code_exec`` as shipped (namespaces, seccomp, rlimits), the asserts as
  written (plain calls: one child, the host decides);
* ``bubblewrap_loop``, ``bubblewrap_humaneval``, ``bubblewrap_unittest``: the same asserts
  inside a loop, a HumanEval ``def check(candidate)`` (plus ``check(f)``), and a unittest
  class: tests that run in a process of their own against a proxy of the answer (two children
  and one message through the host per call).

The target is a per-case median of at most 100 ms for every ``bubblewrap`` way; ratios compare
each way with ``bubblewrap`` in the same run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import re
import statistics
import textwrap
import time
from collections.abc import Callable

from videorl_kit.core.verifiers import get_verifier
from videorl_kit.rewards.code_forms import plan_script
from videorl_kit.synth.layout import Canvas
from videorl_kit.synth.tasks_code import build_code, reference_code

TARGET_MEDIAN_S = 0.100
FORMS = ("plain", "loop", "humaneval", "unittest")

Case = tuple[str, str, list[str], str]  # code, entry point, tests, gold JSON


def cases(n: int, seed: int = 0) -> list[Case]:
    """``n`` cases from synth-code: correct and wrong answers in turn."""
    rng = random.Random(seed)
    found = []
    for index in range(n):
        item = build_code(random.Random(rng.random()), Canvas(), index // 2)
        gold = json.loads(item.answer)
        entry = gold["entry_point"]
        code = (
            reference_code(entry) if index % 2 == 0 else f"def {entry}(*args):\n    return None\n"
        )
        found.append((code, entry, gold["tests"], item.answer))
    return found


def in_form(case: Case, form: str) -> Case:
    """The case with its asserts written in another test form (same checks, same answer)."""
    code, entry, tests, _ = case
    body = "\n".join(tests)
    if form == "plain":
        return case
    if form == "loop":
        written = ["for _ in range(1):\n" + textwrap.indent(body, "    ")]
    elif form == "humaneval":
        checks = re.sub(rf"\b{re.escape(entry)}\b", "candidate", body)
        written = ["def check(candidate):\n" + textwrap.indent(checks, "    "), f"check({entry})"]
    elif form == "unittest":
        written = [
            "import unittest\nclass TestAnswer(unittest.TestCase):\n    def test_all(self):\n"
            + textwrap.indent(body, "        ")
        ]
    else:
        raise ValueError(f"unknown form {form!r}")
    return code, entry, written, json.dumps({"entry_point": entry, "tests": written})


def in_process(case: Case) -> bool:
    """Every test run in this process after the answer (as the kit adds calls to test functions
    that nothing calls: a unittest class is run)."""
    code, entry, tests, _ = case
    namespace: dict = {"__name__": "solution"}
    sources = plan_script(entry, list(enumerate(tests))).sources
    try:
        exec(compile(code, "<solution>", "exec"), namespace)
        for test in sources:
            exec(compile(test, "<test>", "exec"), namespace)
    except Exception:
        return False
    return True


def load_old(path: str) -> Callable[[Case], bool]:
    spec = importlib.util.spec_from_file_location("old_sandbox", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def run(case: Case) -> bool:
        code, entry, tests, _ = case
        result = module.run_python_tests(code, tests, entry_point=entry, module_name="solution")
        return result.status == "passed"

    return run


def verifier_way(isolation: str, form: str = "plain") -> Callable[[Case], bool]:
    verifier = get_verifier("code_exec").create({"timeout_s": 5.0, "isolation": isolation})

    def run(case: Case) -> bool:
        written = in_form(case, form)
        return verifier.score(written[0], written[3]).accuracy == 1.0

    return run


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; returns 1 only with ``--strict`` when the target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=40, help="cases (half correct, half wrong)")
    parser.add_argument("--old-sandbox", help="path of the previous sandbox.py to compare with")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--strict", action="store_true", help="exit 1 if the target is missed")
    args = parser.parse_args(argv)

    ways: dict[str, Callable[[Case], bool]] = {"in_process": in_process}
    if args.old_sandbox:
        ways["old"] = load_old(args.old_sandbox)
    ways["subprocess"] = verifier_way("subprocess")
    ways["bubblewrap"] = verifier_way("bubblewrap")
    for form in FORMS[1:]:
        ways[f"in_process_{form}"] = lambda case, form=form: in_process(in_form(case, form))
        ways[f"bubblewrap_{form}"] = verifier_way("bubblewrap", form)
    chosen = cases(args.n)
    times: dict[str, list[float]] = {name: [] for name in ways}
    verdicts: dict[str, list[bool]] = {name: [] for name in ways}
    for way in ways.values():  # warm-up: imports, caches, the isolation probe
        way(chosen[0])
    for case in chosen:  # round robin: every way sees the same machine load
        for name, way in ways.items():
            started = time.perf_counter()
            verdicts[name].append(way(case))
            times[name].append(time.perf_counter() - started)
    base = statistics.median(times["bubblewrap"])
    report = {
        "n": len(chosen),
        "target_median_s": TARGET_MEDIAN_S,
        "ways": {
            name: {
                "median_s": round(statistics.median(values), 4),
                "p90_s": round(sorted(values)[int(0.9 * (len(values) - 1))], 4),
                "bubblewrap_over_this": round(base / statistics.median(values), 2),
                "passed": sum(verdicts[name]),
            }
            for name, values in times.items()
        },
    }
    bubblewrap_medians = [
        statistics.median(values) for name, values in times.items() if name.startswith("bubblewrap")
    ]
    ok = max(bubblewrap_medians) <= TARGET_MEDIAN_S
    report["pass"] = ok
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"code reward per case, n = {len(chosen)} (same cases, round robin)")
        print(f"{'way':<22} {'median ms':>10} {'p90 ms':>8} {'bwrap / way':>12} {'passed':>7}")
        for name, row in report["ways"].items():
            print(
                f"{name:<22} {row['median_s'] * 1000:>10.1f} {row['p90_s'] * 1000:>8.1f}"
                f" {row['bubblewrap_over_this']:>12.2f} {row['passed']:>7}"
            )
        verdict = "PASS" if ok else "FAIL"
        slowest = max(bubblewrap_medians) * 1000
        print(
            f"bubblewrap median {base * 1000:.1f} ms (plain calls), slowest form {slowest:.1f} ms,"
            f" target <= 100 ms: {verdict}"
        )
    return 1 if args.strict and not ok else 0


if __name__ == "__main__":
    raise SystemExit(main())
