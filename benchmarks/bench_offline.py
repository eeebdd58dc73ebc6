"""Benchmark mixed offline/online GRPO groups on the tiny model (not a test; prints figures).

A synthetic counting task (``synth-count``, 2 frames of 56x56 px) that the tiny model cannot
solve at the start: the model is warm-started as ``bench_train.py`` does (a short supervised
pass on ``<answer>gold</answer>``, here only long enough to learn the format), then trained
with GRPO for the same budget of steps three times, same seed and data:

* ``off``: no ``offline:`` section;
* ``always``: one of the group's members is a stored correct response (``<answer>gold</answer>``
  imported with ``trajectories import`` and re-scored by the kit's verifier), ``n - 1``
  generated;
* ``below_accuracy``: the same, only for groups whose online accuracy is below 0.25 (all ``n``
  generated and scored first).

``correction: recompute`` (the stored responses have no behaviour log-probs). Printed per run:
mean online accuracy (``<task>/accuracy`` logged by the kit; for mixed runs the online members'
accuracy before mixing, ``offline/<task>/online_accuracy``) over the first and last quarter of
steps, the share of groups whose rewards have zero variance (TRL's ``frac_reward_zero_std``),
and seconds per step; the curves go to ``benchmarks/offline_mixing_curve.png``.

Usage:
    python benchmarks/bench_offline.py --steps 48 --warmup-steps 40 --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(REPO))

from benchmarks.bench_train import LEARNING_SPEC, _synth, _train, warm_up  # noqa: E402

CURVE = REPO / "benchmarks" / "offline_mixing_curve.png"
TASK = "bench-learn"

RECIPE = """\
id: bench-offline-{name}
model: {model}
tasks: [{spec}]
store: {store}
algorithm: {{name: grpo, params: {{kl_coef: 0.0}}}}
rollout: {{group_size: 8, max_new_tokens: 16, temperature: 1.0}}
optim: {{lr: {lr}, prompts_per_step: 2, micro_batch_size: 16, steps: {steps}}}
trl: {{save_steps: 100000}}
output_dir: {output}
seed: 0
"""

MODES = {
    "off": None,
    "always": "{source: [curated], per_group: 1, correction: recompute}",
    "below_accuracy": "{source: [curated], per_group: 1, when: below_accuracy, "
    "accuracy_threshold: 0.25, correction: recompute}",
}


def _mean(values: list[Any]) -> float:
    present = [v for v in values if v is not None]
    return statistics.mean(present) if present else float("nan")


def online_accuracy(record: dict[str, Any]) -> float | None:
    """The online members' mean accuracy of a step (before mixing, for a mixed run)."""
    mixed = record.get(f"offline/{TASK}/online_accuracy")
    return mixed if mixed is not None else record.get(f"{TASK}/accuracy")


def import_gold(store: Path, spec: Path, work: Path) -> int:
    """Import ``<answer>gold</answer>`` for every sample of the task as source ``curated``."""
    from videorl_kit.spec.loader import load_spec
    from videorl_kit.store import CachedSampleDataset
    from videorl_kit.train.offline.importer import import_trajectories

    rows = CachedSampleDataset(store, spec=load_spec(spec)).rows
    path = work / "curated.jsonl"
    path.write_text("".join(
        json.dumps({"task_id": TASK, "sample_id": r["sample_id"],
                    "response": f"<answer>{r['answer']}</answer>"}) + "\n"
        for r in rows
    ))  # fmt: skip
    import_trajectories([path], store, source="curated")
    return len(rows)


def plot(results: dict[str, dict[str, Any]], path: Path, window: int = 4) -> None:
    """Online accuracy per step (moving average over ``window`` steps) per mode."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.5))
    for name, result in results.items():
        values = [v if v is not None else float("nan") for v in result["accuracy_per_step"]]
        smooth = [_mean(values[max(0, i - window + 1) : i + 1]) for i in range(len(values))]
        axes.plot(range(1, len(values) + 1), smooth, linewidth=2, label=name)
    axes.set(title=f"Online accuracy on synth-count ({window}-step average)", xlabel="GRPO step",
             ylabel="online accuracy", ylim=(0, 1.05))  # fmt: skip
    axes.grid(alpha=0.3)
    axes.legend(loc="upper left", fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def bench(work: Path, steps: int, warmup_steps: int, lr: float, rows: int) -> dict[str, Any]:
    from videorl_kit.store import build_cache
    from videorl_kit.train.plan import plan_training
    from videorl_kit.train.tiny_model import build_tiny_model

    synth = _synth(work / "synth", rows, ["count"])
    spec = work / "learn.yaml"
    spec.write_text(LEARNING_SPEC.format(
        parent=REPO / "task_specs" / "synth-count.yaml", data=synth / "count.jsonl", media=synth,
    ))  # fmt: skip
    store = work / "store"
    build_cache([spec], store, workers=1)
    imported = import_gold(store, spec, work)
    base = build_tiny_model(work / "base", "qwen2.5-vl", seed=0).path
    first = work / "recipe-off.yaml"
    first.write_text(RECIPE.format(name="off", model=base, spec=spec, store=store, lr=lr,
                                   steps=steps, output=work / "run-off"))  # fmt: skip
    warm = warm_up(base, plan_training(first), work / "warm", warmup_steps, lr=1e-3)
    results: dict[str, dict[str, Any]] = {}
    for name, offline in MODES.items():
        recipe = work / f"recipe-{name}.yaml"
        text = RECIPE.format(name=name.replace("_", "-"), model=warm, spec=spec, store=store,
                             lr=lr, steps=steps, output=work / f"run-{name}")  # fmt: skip
        recipe.write_text(text + (f"offline: {offline}\n" if offline else ""))
        started = time.perf_counter()
        records, step_seconds = _train(recipe)
        seconds = time.perf_counter() - started
        accuracy = [online_accuracy(r) for r in records]
        quarter = max(1, len(records) // 4)
        results[name] = {
            "steps": len(records),
            "seconds": seconds,
            "seconds_per_step": statistics.median(step_seconds) if step_seconds else float("nan"),
            "accuracy_first_quarter": _mean(accuracy[:quarter]),
            "accuracy_last_quarter": _mean(accuracy[-quarter:]),
            "zero_std_share": _mean([r.get("frac_reward_zero_std") for r in records]),
            "groups_mixed": sum(r.get(f"offline/{TASK}/mixed", 0) for r in records),
            "generated_per_step": _mean([r.get("offline/generated") for r in records]),
            "accuracy_per_step": accuracy,
        }
        print(name, {k: v for k, v in results[name].items() if k != "accuracy_per_step"},
              flush=True)  # fmt: skip
    plot(results, CURVE)
    return {"task": f"synth-count ({rows} rows)", "imported": imported, "lr": lr,
            "warmup_steps": warmup_steps, "runs": results, "curve": str(CURVE)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--warmup-steps", type=int, default=40)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--rows", type=int, default=32)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        summary = bench(Path(folder), args.steps, args.warmup_steps, args.lr, args.rows)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    for name, run in summary["runs"].items():
        print(f"{name:>15}: accuracy {run['accuracy_first_quarter']:.3f} -> "
              f"{run['accuracy_last_quarter']:.3f}, zero-variance groups "
              f"{run['zero_std_share']:.2f}, {run['seconds_per_step']:.2f} s/step, "
              f"{run['groups_mixed']} groups mixed")  # fmt: skip


if __name__ == "__main__":
    main()
