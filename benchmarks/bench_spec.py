"""What bounded spec loading costs: prompt rendering and YAML reading, side by side.

Usage::

    python benchmarks/bench_spec.py            # 20,000 renders, a 1 MiB spec
    python benchmarks/bench_spec.py --renders 2000 --json

Prompt rendering (per sample, in training and evaluation) is timed three ways on the shipped
multiple-choice template with its options: the bounded sandbox
(:func:`videorl_kit.spec.template_sandbox.render_bounded`, compiled once and cached), plain
Jinja's immutable sandbox with the template compiled once (the cheapest unbounded render),
and the previous code path (plain sandbox, compiled on every call). Reading YAML is timed on
a spec of about 1 MiB (the per-file limit, 40,000 keys): the event-built reader
(:func:`videorl_kit.spec.yaml_source.parse_yaml_text`) against PyYAML's pure-Python
``compose``, which the loader used before. Each figure is the best of ``--repeat`` runs,
and ratios are taken within this one run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from jinja2 import StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from videorl_kit.spec import load_spec
from videorl_kit.spec.template_sandbox import render_bounded
from videorl_kit.spec.yaml_source import parse_yaml_text

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "task_specs" / "synth-multiple-choice.yaml"
VARIABLES = {
    "question": "Which shape moves fastest?",
    "options": ["A. The red circle", "B. The blue square", "C. The green star", "D. None"],
    "problem_type": "multiple_choice",
    "row": {"problem": "Which shape moves fastest?", "answer": "A"},
}


def best_seconds(call: Callable[[], Any], repeat: int) -> float:
    """The fastest of ``repeat`` timed calls (background load only slows a run down)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def render_figures(renders: int, repeat: int) -> dict[str, float]:
    """Microseconds per render: bounded, plain compiled once, plain compiled per call."""
    template = load_spec(SPEC).prompt.template
    plain = ImmutableSandboxedEnvironment(
        undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False
    )
    compiled = plain.from_string(template)
    assert render_bounded(template, VARIABLES) == compiled.render(VARIABLES)

    def per_render(call: Callable[[], Any], n: int) -> float:
        return best_seconds(lambda: [call() for _ in range(n)], repeat) / n * 1e6

    return {
        "bounded_us": per_render(lambda: render_bounded(template, VARIABLES), renders),
        "plain_compiled_once_us": per_render(lambda: compiled.render(VARIABLES), renders),
        "previous_path_us": per_render(
            lambda: plain.from_string(template).render(VARIABLES), max(renders // 20, 1)
        ),
    }


def yaml_figures(keys: int, repeat: int) -> dict[str, float]:
    """Seconds to read a spec-sized YAML text: event-built reader vs pure-Python compose."""
    text = "".join(f"key_{i:06d}: [{i}, value {i}]\n" for i in range(keys))
    return {
        "yaml_bytes": len(text.encode()),
        "event_reader_s": best_seconds(lambda: parse_yaml_text(text, "big.yaml"), repeat),
        "pure_python_compose_s": best_seconds(
            lambda: yaml.compose(text, Loader=yaml.SafeLoader), repeat
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renders", type=int, default=20_000, help="renders per timed run")
    parser.add_argument("--keys", type=int, default=40_000, help="keys in the YAML text")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the best is kept")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    render = render_figures(args.renders, args.repeat)
    reading = yaml_figures(args.keys, args.repeat)
    ratios = {
        "bounded_vs_plain_compiled_once": render["bounded_us"] / render["plain_compiled_once_us"],
        "bounded_vs_previous_path": render["bounded_us"] / render["previous_path_us"],
        "event_reader_vs_pure_python_compose": (
            reading["event_reader_s"] / reading["pure_python_compose_s"]
        ),
    }
    if args.json:
        print(json.dumps({"render": render, "yaml": reading, "ratios": ratios}, indent=2))
        return 0
    print(
        f"prompt render (us): bounded {render['bounded_us']:.1f}, plain compiled once "
        f"{render['plain_compiled_once_us']:.1f}, previous path {render['previous_path_us']:.1f}"
    )
    print(
        f"reading {reading['yaml_bytes']} bytes of YAML (s): event reader "
        f"{reading['event_reader_s']:.3f}, "
        f"pure-Python compose {reading['pure_python_compose_s']:.3f}"
    )
    for name, value in ratios.items():
        print(f"{name}: {value:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
