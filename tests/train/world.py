"""A small training world: synthetic tasks of several problem types, specs per model family,
a built frame store, and recipes over them (used by the training tests and the benchmark).

Two tasks exist to check reward routing: ``parity`` is scored by a test verifier that gives
1.0 to answers of even length (about half of a random model's completions, so rewards vary
and gradients flow), and ``routing`` (gold 987654321) would get the same 1.0s if its rows
were scored by ``parity``'s verifier, but must get 0 under its own ``numeric`` verifier.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from videorl_kit.core.verifiers import NoParams, register_verifier
from videorl_kit.rewards.base import VerifyOutcome

SYNTH_TASKS = {"count": "numerical", "multiple_choice": "multiple_choice", "boolean": "boolean",
               "image_count": "numerical"}  # fmt: skip
PATCH = {"qwen2.5-vl": 28, "qwen3-vl": 32}


@register_verifier(name="test_even_length", version=1, problem_types=["open_ended"])
class EvenLength:
    """1.0 when the extracted answer has an even number of characters (training tests)."""

    def __init__(self, params: NoParams) -> None:
        self.params = params

    def score(self, answer_text: str, gold: str, options: Any = None) -> VerifyOutcome:
        return VerifyOutcome.ok(1.0 if len(answer_text) % 2 == 0 else 0.0)


def spec_text(task_id: str, problem_type: str, data: str, patch: int, verifier: str = "") -> str:
    """A spec over ``data`` with small budgets for a model of resize factor ``patch``."""
    return (
        f"id: {task_id}\nversion: 1\nproblem_type: {problem_type}\n"
        # synth/ is a link to the world's one shared data folder: allowed to point out
        f"data: {{path: {data}, media_root: synth, allow_absolute_paths: true}}\n"
        "budget:\n"
        f"  video: {{fps: 2.0, min_frames: 2, max_frames: 2, min_pixels: {patch * patch}, "
        f"max_pixels: {4 * patch * patch}, patch: {patch}}}\n"
        f"  image: {{min_pixels: {patch * patch}, max_pixels: {9 * patch * patch}, patch: {patch}}}\n"
        f"{verifier}"
        "reward: {format: none, weights: {accuracy: 1.0, format: 0.0}}\n"
        'prompt: {template: "{{ question }} Answer briefly."}\n'
    )


def write_routing_rows(synth: Path) -> None:
    """Rows of the ``parity`` (videos) and ``routing`` (images) tasks, on synthetic media."""
    count = [json.loads(line) for line in (synth / "count.jsonl").read_text().splitlines()]
    images = [json.loads(line) for line in (synth / "image_count.jsonl").read_text().splitlines()]
    parity = [{"id": f"p{i}", "problem": "Say anything.", "answer": "x", "videos": r["videos"]}
              for i, r in enumerate(count)]  # fmt: skip
    routing = [{"id": f"r{i}", "problem": "How many?", "answer": "987654321",
                "images": r["images"]} for i, r in enumerate(images)]  # fmt: skip
    (synth / "parity.jsonl").write_text("".join(json.dumps(r) + "\n" for r in parity))
    (synth / "routing.jsonl").write_text("".join(json.dumps(r) + "\n" for r in routing))


def write_specs(root: Path, family: str) -> list[Path]:
    """Specs of every world task for ``family`` in ``root/specs-<family>``."""
    folder = root / f"specs-{family}"
    folder.mkdir(exist_ok=True)
    (folder / "synth").symlink_to(root / "synth")
    patch = PATCH[family]
    paths = []
    for task, problem_type in SYNTH_TASKS.items():
        path = folder / f"{task}.yaml"
        path.write_text(
            spec_text(task.replace("_", "-"), problem_type, f"synth/{task}.jsonl", patch)
        )
        paths.append(path)
    parity = folder / "parity.yaml"
    verifier = "verifier: {name: test_even_length, version: 1}\n"
    parity.write_text(spec_text("parity", "open_ended", "synth/parity.jsonl", patch, verifier))
    routing = folder / "routing.yaml"
    routing.write_text(spec_text("routing", "numerical", "synth/routing.jsonl", patch))
    return [*paths, parity, routing]


def recipe_text(family: str, store: Path, output: Path, **overrides: Any) -> str:
    """A recipe over every world task of ``family`` (relative spec paths, absolute dirs)."""
    settings = {"steps": 3, "save_steps": 50, "algorithm": "grpo", "params": "{kl_coef: 0.04}",
                "lr": "1.0e-3", "seed": 0} | overrides  # fmt: skip
    return (
        f"id: test-{family.replace('.', '-')}\n"
        f"model: tiny:{family}\n"
        "tasks:\n"
        f"  - specs-{family}/*.yaml\n"
        f"store: {store}\n"
        f"algorithm: {{name: {settings['algorithm']}, params: {settings['params']}}}\n"
        "rollout: {group_size: 4, max_new_tokens: 6}\n"
        f"optim: {{lr: {settings['lr']}, prompts_per_step: 2, micro_batch_size: 4, "
        f"steps: {settings['steps']}}}\n"
        f"trl: {{save_steps: {settings['save_steps']}}}\n"
        f"output_dir: {output}\n"
        f"seed: {settings['seed']}\n"
    )
