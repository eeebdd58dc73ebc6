"""Native video through OpenRLHF 0.11.2: the agent executor a bundle's ``agent_func.py`` builds.

OpenRLHF's own executor loads a row's ``images`` and hands the processor images only. With
``--train.agent_func_path`` set, each vLLM rollout actor builds the ``AgentExecutor`` class of
that file instead; the bundle's file gets it from :func:`native_video_executor`. For each
prompt it:

1. reads the row's media (``.npy`` videos with their metadata, PNG images; see
   :mod:`.media`) and runs the model's processor on them exactly as the kit's own dataset
   does (:func:`~videorl_kit.media.processor_inputs.processor_outputs`: frames already sampled
   and resized, source fps and frame indices as ``video_metadata``). That gives the
   training inputs: the expanded prompt ids and ``pixel_values_videos``, ``video_grid_thw``
   and the timing each family needs (``second_per_grid_ts`` for Qwen2.5-VL; Qwen3-VL's
   ``<t seconds>`` markers are prompt tokens);
2. sends vLLM the *unexpanded* prompt ids (one placeholder per item, the chat template's
   text) with the frames and their metadata (``do_sample_frames`` off), so vLLM expands
   the placeholders itself (with Qwen3-VL's timestamps, which the collapse of repeated pad
   tokens in OpenRLHF's ``generate`` would otherwise break);
3. returns the expanded prompt ids plus the generated ids as the training sequence, the
   processor tensors as ``mm_train_inputs`` and the bundle reward (:class:`.BundleReward`)
   of the response.

Training then needs ``Actor.forward`` to tag video tokens the way the processor does; that is
the start-up patch in :mod:`.patches` (:func:`~.patches.setup_worker`).

Example (without OpenRLHF installed the class cannot be built):
    >>> split_media(["/b/media/k1.npy", "/b/frames/k2/0.png"])
    (['/b/media/k1.npy'], ['/b/frames/k2/0.png'])
"""

from __future__ import annotations

import importlib.util
from copy import deepcopy
from pathlib import Path
from typing import Any

from videorl_kit.adapters.openrlhf.media import VIDEO_SUFFIX, read_png, read_video
from videorl_kit.adapters.openrlhf.offline import OfflineMembers
from videorl_kit.adapters.openrlhf.patches import raise_vllm_video_limit
from videorl_kit.adapters.openrlhf.reward import BundleReward
from videorl_kit.media.processor_inputs import processor_outputs

_NOT_TRAINING_INPUTS = {"input_ids", "attention_mask", "token_type_ids", "mm_token_type_ids"}


def split_media(refs: Any) -> tuple[list[str], list[str]]:
    """A row's media references, split into videos (``.npy``) and images, in order."""
    if refs is None:
        return [], []
    items = [refs] if isinstance(refs, str) else [r for r in refs if r is not None]
    videos = [str(r) for r in items if str(r).endswith(VIDEO_SUFFIX)]
    images = [str(r) for r in items if not str(r).endswith(VIDEO_SUFFIX)]
    return videos, images


def prompt_inputs(processor: Any, prompt: str, refs: Any) -> dict[str, Any]:
    """Everything one prompt needs for rollout and training.

    Returns ``train_ids`` (the processor's expanded prompt ids), ``rollout_ids`` (the prompt
    text's own ids, one placeholder per media item), ``mm_train_inputs`` (processor tensors
    other than ids and masks; None for a text-only prompt) and ``mm_data`` (vLLM's
    ``multi_modal_data``: ``video`` as (frames, metadata) pairs, ``image`` as PIL images).
    """
    from PIL import Image

    video_refs, image_refs = split_media(refs)
    videos, metadata = [], []
    for ref in video_refs:
        frames, meta, _ = read_video(ref)
        videos.append(frames)
        metadata.append(meta)
    images = [read_png(ref) for ref in image_refs]
    tokenizer = getattr(processor, "tokenizer", processor)
    rollout_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    if not videos and not images:
        return {"train_ids": list(rollout_ids), "rollout_ids": list(rollout_ids),
                "mm_train_inputs": None, "mm_data": None}  # fmt: skip
    outputs = processor_outputs(processor, prompt, videos, metadata, images)
    mm_data: dict[str, Any] = {}
    if videos:
        mm_data["video"] = [
            (frames, {**meta, "do_sample_frames": False})
            for frames, meta in zip(videos, metadata, strict=True)
        ]
    if images:
        mm_data["image"] = [Image.fromarray(image) for image in images]
    return {
        "train_ids": outputs["input_ids"][0].tolist(),
        "rollout_ids": list(rollout_ids),
        "mm_train_inputs": {k: v for k, v in outputs.items() if k not in _NOT_TRAINING_INPUTS},
        "mm_data": mm_data,
    }


async def run_native_video(
    reward: BundleReward,
    prompt: str,
    label: Any,
    sampling_params: Any,
    max_length: int,
    processor: Any,
    llm_engine: Any,
    refs: Any = None,
) -> dict[str, Any]:
    """One rollout of one prompt, in the shape OpenRLHF's executors return (see the module
    doc). Raises ``ValueError`` for a prompt longer than ``max_length`` leaves room for
    (truncating it would cut media tokens) or for media the bundle lacks."""
    inputs = prompt_inputs(processor, prompt, refs)
    train_ids = inputs["train_ids"]
    params = sampling_params
    if params.max_tokens is None:
        params = deepcopy(sampling_params)
        params.max_tokens = max(1, max_length - len(train_ids))
    if len(train_ids) > max_length - params.max_tokens:
        raise ValueError(
            f"prompt of {len(train_ids)} tokens leaves no room for {params.max_tokens} new tokens "
            f"within max_len {max_length}; raise --data.max_len or lower the video budget"
        )
    request = await llm_engine.generate(
        inputs["rollout_ids"], deepcopy(params), multi_modal_data=inputs["mm_data"]
    )
    generated = request.outputs[0]
    action_ids = list(generated.token_ids)
    observation = train_ids + action_ids
    rollout_log_probs = None
    if sampling_params.logprobs is not None and generated.logprobs is not None:
        rollout_log_probs = [0.0] * len(train_ids)
        for token_id, candidates in zip(action_ids, generated.logprobs, strict=False):
            chosen = candidates.get(token_id)
            rollout_log_probs.append(chosen.logprob if chosen is not None else 0.0)
    query = processor.decode(observation, skip_special_tokens=False)
    scored = reward([query], [prompt], [label])
    return {
        "prompt": prompt,
        "label": label,
        "images": refs,
        "mm_train_inputs": inputs["mm_train_inputs"],
        "observation_tokens": observation,
        "action_ranges": [(len(train_ids), len(observation))],
        "rollout_log_probs": rollout_log_probs,
        "truncated": generated.finish_reason == "length",
        "reward": scored["rewards"],
        "scores": scored["scores"],
        "extra_logs": scored["extra_logs"],
    }


def native_video_executor(
    tasks_file: str | Path, max_videos_per_prompt: int, offline_file: str | Path | None = None
) -> type:
    """The ``AgentExecutor`` class of a bundle (OpenRLHF builds it with no arguments).

    Building it reads the bundle's ``tasks.resolved.json`` (and, for a recipe with an
    ``offline:`` section, its ``offline.json``: the group members that are offline get the
    stored response, :mod:`.offline`) and, inside a vLLM rollout actor (where ``vllm`` is
    importable), raises vLLM's per-prompt video limit (:func:`~.patches.raise_vllm_video_limit`)
    before the actor builds its engine.
    """
    from openrlhf.utils.agent import AgentExecutorBase

    if importlib.util.find_spec("vllm") is not None:
        raise_vllm_video_limit(max_videos_per_prompt)
    reward = BundleReward.from_file(tasks_file)
    offline = None if offline_file is None else OfflineMembers.from_file(offline_file)

    class AgentExecutor(AgentExecutorBase):
        """Rolls out one prompt with native video and scores it with the bundle reward."""

        async def execute(
            self,
            prompt: str,
            label: Any,
            sampling_params: Any,
            max_length: int,
            hf_tokenizer: Any,
            llm_engine: Any,
            images: Any = None,
        ) -> dict[str, Any]:
            def online() -> Any:
                return run_native_video(reward, prompt, label, sampling_params, max_length,
                                        hf_tokenizer, llm_engine, images)  # fmt: skip

            if offline is None:
                return await online()
            return await offline.execute(
                reward, prompt, label, sampling_params, max_length, hf_tokenizer, online,
                lambda: {**prompt_inputs(hf_tokenizer, prompt, images), "refs": images},
            )  # fmt: skip

    return AgentExecutor
