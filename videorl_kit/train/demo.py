"""A complete demo training setup on disk: the synthetic demo task, its store and a recipe.

Used by the runnable examples of the training API (building the store takes a few seconds on
a CPU) and handy for trying ``videorl-kit train`` without any download.

Example:
    >>> import tempfile
    >>> recipe = write_demo_recipe(tempfile.mkdtemp())
    >>> recipe.name, sorted(p.name for p in recipe.parent.iterdir() if p.suffix == ".yaml")
    ('demo-recipe.yaml', ['demo-recipe.yaml', 'demo.yaml'])
"""

from __future__ import annotations

from pathlib import Path

from videorl_kit.store import build_cache
from videorl_kit.synth import write_demo_task

DEMO_RECIPE = """\
# GRPO on the demo task (videorl_kit.synth.write_demo_task) with a tiny random Qwen2.5-VL.
id: demo-grpo
model: tiny:qwen2.5-vl
tasks: [demo.yaml]
store: store
algorithm: {name: grpo}
rollout: {group_size: 2, max_new_tokens: 8}
optim: {lr: 1.0e-4, prompts_per_step: 2, micro_batch_size: 4, steps: 2}
trl: {save_steps: 1}
output_dir: runs/demo
"""


def write_demo_recipe(folder: str | Path, *, build: bool = True) -> Path:
    """Write the demo task and ``demo-recipe.yaml`` to ``folder``; build the store unless told.

    Returns the recipe's path. The store is ``folder/store``, the run folder ``folder/runs/demo``.
    """

    folder = Path(folder)
    spec = write_demo_task(folder)
    if build:
        build_cache([spec], folder / "store", workers=1)
    recipe = folder / "demo-recipe.yaml"
    recipe.write_text(DEMO_RECIPE, encoding="utf-8")
    return recipe
