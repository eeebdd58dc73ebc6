"""The run bundle: everything an OpenRLHF 0.11.2 cluster job needs, in one folder.

``videorl-kit train RECIPE --backend openrlhf --dry-run --output DIR`` writes ``DIR``:

================================  ==========================================================
``argv.json``                     the full ``train_ppo_ray`` argv (:mod:`.argv`)
``launch.sh``                     ``ray job submit`` with the runtime env, then the argv
``runtime_env.json``              kit snapshot (``py_modules``), its requirements, setup hook
``data/train.<task>.jsonl``       prompts per task in OpenRLHF's layout (:mod:`.prompts`)
``frames/``, ``media/``           cached frames as PNG, native videos as ``.npy``
``tasks.resolved.json``           resolved specs with provenance, mixing, chat markers
``recipe.resolved.yaml``          the recipe with every default (written by the run, with
                                  ``specs.json`` and ``versions.json``)
``reward_func.py``                ``reward_func(queries, prompts, labels)`` (:mod:`.reward`)
``agent_func.py``                 native video only: the rollout agent (:mod:`.video_agent`)
``offline.json``                  with an ``offline:`` section: the selected trajectories
                                  (:mod:`.offline`)
``base-model/``                   a ``tiny:`` model (the run folder's)
``kit/videorl_kit/``              the kit that wrote the bundle, shipped to every node
================================  ==========================================================

The generated ``.py`` files hold absolute imports only and the absolute path of
``tasks.resolved.json`` (every value a Python literal written by ``repr``, none in a
docstring or comment), fixed when the bundle is written: OpenRLHF loads them by path in
each rollout actor, where relative imports fail and environment variables may not arrive.

Which video path (``openrlhf.video``): ``native`` for Qwen2.5-VL and Qwen3-VL (video tokens
merge two frames per temporal patch, so half the visual tokens of frames-as-images, and the
model sees the time axis: ``second_per_grid_ts`` for Qwen2.5-VL's M-RoPE, timestamp markers
for Qwen3-VL), and for any model trained on video; ``frames_as_images`` (the default) for
models without a video processor, for stock OpenRLHF without the start-up patches, and when
the rollout must use OpenRLHF's own executor. See ``docs/openrlhf.md``.

Example (``write_bundle(plan)`` returns a :class:`Bundle`):
    >>> bundle = Bundle(Path("/runs/tiny"), [], "native", {"tiny-count": 8})
    >>> bundle.command()
    'bash /runs/tiny/launch.sh'
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from videorl_kit import __version__
from videorl_kit.adapters.openrlhf.argv import PromptStats, openrlhf_flags, to_argv
from videorl_kit.adapters.openrlhf.chat import chat_markers
from videorl_kit.adapters.openrlhf.launch import (
    DEFAULT_RAY_ADDRESS,
    snapshot_kit,
    write_launch_files,
)
from videorl_kit.adapters.openrlhf.offline import write_offline_file
from videorl_kit.adapters.openrlhf.patches import SUPPORTED_OPENRLHF
from videorl_kit.adapters.openrlhf.prompts import export_task_prompts
from videorl_kit.adapters.openrlhf.reward import write_tasks_file
from videorl_kit.core.errors import UserError

TASKS_FILE = "tasks.resolved.json"

_REWARD_MODULE = '''"""reward_func of a videorl-kit run bundle (RECIPE names its recipe).

Written by videorl-kit {version}. OpenRLHF {openrlhf} loads this file in every vLLM rollout
actor (--reward.remote_url) and calls reward_func(queries, prompts, labels) once per sample,
from several threads. It never raises: a sample it cannot score gets reward 0, a warning,
and error/<reason> in extra_logs.
"""

from videorl_kit.adapters.openrlhf.reward import BundleReward

RECIPE = {recipe_id!r}
TASKS_FILE = {tasks_file!r}

_reward = BundleReward.from_file(TASKS_FILE)


def reward_func(queries, prompts, labels):
    return _reward(queries, prompts, labels)
'''

_AGENT_MODULE = '''"""Native-video agent of a videorl-kit run bundle (RECIPE names its recipe).

Written by videorl-kit {version}. OpenRLHF {openrlhf} loads this file in every vLLM rollout
actor (--train.agent_func_path) and builds AgentExecutor() there: it sends each prompt's cached
video frames, with their timing, to vLLM and to training, and scores the response with the
bundle's reward.
"""

from videorl_kit.adapters.openrlhf.video_agent import native_video_executor

RECIPE = {recipe_id!r}
TASKS_FILE = {tasks_file!r}

OFFLINE_FILE = {offline_file!r}

AgentExecutor = native_video_executor(TASKS_FILE, max_videos_per_prompt={max_videos},
                                      offline_file=OFFLINE_FILE)
'''


def reward_module_text(recipe_id: str, tasks_file: Path) -> str:
    """The source of a bundle's ``reward_func.py``.

    Example:
        >>> "TASKS_FILE = '/runs/x/tasks.resolved.json'" in reward_module_text(
        ...     "x", Path("/runs/x/tasks.resolved.json"))
        True
    """
    return _REWARD_MODULE.format(
        recipe_id=recipe_id, version=__version__, openrlhf=SUPPORTED_OPENRLHF,
        tasks_file=str(tasks_file),
    )  # fmt: skip


def agent_module_text(
    recipe_id: str, tasks_file: Path, max_videos: int, offline_file: Path | None = None
) -> str:
    """The source of a native-video bundle's ``agent_func.py`` (``offline_file``: the
    bundle's ``offline.json`` of a recipe with an ``offline:`` section)."""
    offline = None if offline_file is None else str(offline_file)
    return _AGENT_MODULE.format(recipe_id=recipe_id, version=__version__,
                                openrlhf=SUPPORTED_OPENRLHF, tasks_file=str(tasks_file),
                                max_videos=max_videos, offline_file=offline)  # fmt: skip


@dataclass(frozen=True)
class Bundle:
    """A written run bundle."""

    root: Path
    argv: list[str]
    video: str
    prompts: dict[str, int]

    @property
    def launch_script(self) -> Path:
        """``launch.sh``."""
        return self.root / "launch.sh"

    def command(self) -> str:
        """The command that launches the bundle on a cluster (the path quoted for a shell)."""
        return shlex.join(["bash", str(self.launch_script)])


def _model(plan: Any) -> tuple[str, Any]:
    """What OpenRLHF loads (``--actor.model_name_or_path``: an absolute folder; a ``tiny:``
    model is in the run folder) and the model's processor, read from local files only (the
    backend's check refuses Hub models, so nothing here waits on the network)."""
    from transformers import AutoProcessor

    name = plan.model_name_or_path
    if plan.model.kind != "hub":
        name = str(Path(name).resolve())
    try:
        processor = AutoProcessor.from_pretrained(name, local_files_only=True)
    except Exception as exc:
        raise UserError(f"model {name}: cannot load its processor: {exc}") from None
    return name, processor


def write_bundle(plan: Any) -> Bundle:
    """Write the run bundle of a checked training plan (``videorl_kit.train.plan``) into its
    output folder; returns what was written. Raises :class:`~videorl_kit.core.errors.UserError`
    for a model whose processor cannot be loaded or a store without the tasks' samples."""
    recipe = plan.recipe
    root = Path(plan.output_dir).resolve()
    root.mkdir(parents=True, exist_ok=True)
    video = recipe.openrlhf.video
    model, processor = _model(plan)
    exports = [
        export_task_prompts(entry.spec, Path(plan.store), root, video, processor)
        for entry in plan.loaded.tasks
    ]
    total_weight = sum(entry.weight for entry in plan.loaded.tasks)
    probabilities = [entry.weight / total_weight for entry in plan.loaded.tasks]
    tasks_file = root / TASKS_FILE
    per_task = [
        {"weight": entry.weight, "probability": probability, "prompts": export.n_prompts,
         "file": str(export.file)}
        for entry, export, probability in zip(plan.loaded.tasks, exports, probabilities,
                                              strict=True)
    ]  # fmt: skip
    write_tasks_file(
        tasks_file, [entry.spec for entry in plan.loaded.tasks], chat_markers(processor),
        per_task=per_task, videorl_kit=__version__, openrlhf=SUPPORTED_OPENRLHF,
        recipe=recipe.id, model=model, store=str(Path(plan.store).resolve()), video=video,
    )  # fmt: skip
    reward_file = root / "reward_func.py"
    reward_file.write_text(reward_module_text(recipe.id, tasks_file), encoding="utf-8")
    stats = PromptStats(
        files=[export.file for export in exports],
        probabilities=probabilities,
        n_prompts=sum(export.n_prompts for export in exports),
        max_images=max(export.max_images for export in exports),
        max_videos=max(export.max_videos for export in exports),
        max_prompt_tokens=max(export.max_prompt_tokens for export in exports),
    )
    agent_file = offline_file = None
    if recipe.offline is not None:  # the selected trajectories travel with the bundle
        if video != "native":
            raise UserError(
                f"{plan.loaded.path}: offline: backend openrlhf mixes stored responses in "
                "through the bundle's agent, which only the native video path has; set "
                "openrlhf.video: native"
            )
        offline_file, _ = write_offline_file(plan, root)
    if video == "native":
        agent_file = root / "agent_func.py"
        text = agent_module_text(recipe.id, tasks_file, max(1, stats.max_videos), offline_file)
        agent_file.write_text(text, encoding="utf-8")
    flags = openrlhf_flags(
        recipe, plan.loaded.options, model=model, prompts=stats, output_dir=root,
        reward_file=reward_file, agent_file=agent_file, resume=plan.resume,
    )  # fmt: skip
    argv = to_argv(flags)
    snapshot_kit(root)
    address = recipe.openrlhf.ray_address or DEFAULT_RAY_ADDRESS
    write_launch_files(root, argv, address, native_video=video == "native")
    return Bundle(root, argv, video, {e.task_id: e.n_prompts for e in exports})
