"""videorl-kit: declarative RLVR on video understanding.

Declare a task once in YAML, decode every video once into a Lance cache, score model
outputs with strict verifiers, and hand the same data and rewards to a trainer or the
evaluator. The public API is flat and loads lazily: ``import videorl_kit`` imports neither
torch nor Lance, and each name loads its module on first use.

========================================  ==================================================
``load_spec``, ``load_specs``             read and validate task specs (all errors at once)
``iter_samples``, ``render_prompt``       a spec's data rows as samples; a sample's prompt
``build_cache``, ``BuildConfig``          decode every distinct video/image once into a store
``FrameStore``                            read cached frames by cache key
``CachedSampleDataset``                   ready samples with their frames, for PyTorch
``collate_samples``                       batch dataset items (media as lists, tokens padded)
``TaskReward``                            a spec's reward, routed per row (verifier per type)
``reward_function_from_spec``             one problem type's reward function of a spec
``reward_function_for``                   a reward function by problem type
``TaskRewardFunction``,                   one reward function per task in TRL's shape
``trl_reward_functions``
``VideoRLKitError``, ``UserError``        the root of the kit's errors; input problems
========================================  ==================================================

Example (a tiny store from synthetic media, then a dataset batch scored by the TRL reward
functions, with no glue in between):

    >>> import tempfile
    >>> import videorl_kit as vk
    >>> from videorl_kit.synth import write_demo_task
    >>> folder = tempfile.mkdtemp()
    >>> spec = vk.load_spec(write_demo_task(folder))  # 2 clips and 2 stills
    >>> sample = next(vk.iter_samples(spec))
    >>> vk.render_prompt(spec, sample).endswith("Put the final answer in <answer></answer>.")
    True
    >>> summary = vk.build_cache([spec], f"{folder}/store", vk.BuildConfig(workers=1))
    >>> summary.n_input == summary.n_ok == 4
    True
    >>> store = vk.FrameStore.open(f"{folder}/store")
    >>> store.get(store.keys()[0]).frames.dtype
    dtype('uint8')
    >>> dataset = vk.CachedSampleDataset(f"{folder}/store", spec=spec)
    >>> batch = vk.collate_samples([dataset[i] for i in range(len(dataset))])
    >>> (reward,) = vk.trl_reward_functions([spec])
    >>> completions = [f"<think>count</think><answer>{a}</answer>" for a in batch["answer"]]
    >>> reward(prompts=batch["prompt"], completions=completions, **batch)
    [1.0, 1.0, 1.0, 1.0]
    >>> vk.TaskReward.from_spec(spec).score("<answer>12</answer>", "3", None, "numerical").overall
    0.1
"""

from videorl_kit.core.lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "load_spec": "videorl_kit.spec.loader",
    "load_specs": "videorl_kit.spec.loader",
    "iter_samples": "videorl_kit.spec.data",
    "render_prompt": "videorl_kit.spec.prompt",
    "build_cache": "videorl_kit.store.builder",
    "BuildConfig": "videorl_kit.store.build_config",
    "FrameStore": "videorl_kit.store.reader",
    "CachedSampleDataset": "videorl_kit.store.torch_dataset",
    "collate_samples": "videorl_kit.store.collate",
    "TaskReward": "videorl_kit.rewards.task",
    "reward_function_from_spec": "videorl_kit.rewards.router",
    "reward_function_for": "videorl_kit.rewards.router",
    "TaskRewardFunction": "videorl_kit.rewards.trl_functions",
    "trl_reward_functions": "videorl_kit.rewards.trl_functions",
    "VideoRLKitError": "videorl_kit.core.errors",
    "UserError": "videorl_kit.core.errors",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
