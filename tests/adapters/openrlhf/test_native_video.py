"""Native video through OpenRLHF: the bundle's agent and the start-up patch, on CPU.

The agent (with a fake vLLM engine) turns a prompt row, read by OpenRLHF's own dataset code,
into training inputs; OpenRLHF's own ``Actor`` computes their log-probs. They must equal the
log-probs of the kit's own processor path (``CachedSampleDataset`` with the model's
processor) on the same weights, for both Qwen families.
"""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from tests.adapters.openrlhf.conftest import require_openrlhf, stub_flash_attn_kernels
from tests.adapters.openrlhf.test_reward import FakeEngine
from videorl_kit.adapters.openrlhf.bundle import agent_module_text
from videorl_kit.adapters.openrlhf.chat import chat_markers
from videorl_kit.adapters.openrlhf.labels import decode_label
from videorl_kit.adapters.openrlhf.prompts import export_task_prompts
from videorl_kit.adapters.openrlhf.reward import write_tasks_file
from videorl_kit.spec.loader import load_spec
from videorl_kit.store import CachedSampleDataset

RESPONSE = "<think>I count them.</think><answer>3</answer><|im_end|>"
FAMILY_TASKS = {"qwen2.5-vl": "tiny-count", "qwen3-vl": "tiny-count-qwen3"}


def prompt_dataset(files: list[Path], processor, probabilities: str | None = None):
    """Rows as OpenRLHF's trainer reads them: ``blending_datasets`` (mixed by
    ``probabilities``, else concatenated), then ``PromptDataset``."""
    from openrlhf.datasets import PromptDataset
    from openrlhf.datasets.utils import blending_datasets

    data = SimpleNamespace(input_key="prompt", label_key="label", image_key="images",
                           apply_chat_template=True)  # fmt: skip
    strategy = SimpleNamespace(args=SimpleNamespace(data=data, use_ms=False),
                               print=lambda *a: None, is_rank_0=lambda: True)  # fmt: skip
    rows = blending_datasets(",".join(map(str, files)), probabilities, strategy)
    return PromptDataset(rows, processor, strategy)


def load_agent_executor(path: Path):
    """What OpenRLHF's RolloutRayActor does with --train.agent_func_path (its module needs
    vLLM to import): load the file by path, check the class, build it without arguments."""
    from openrlhf.utils.agent import AgentExecutorBase

    spec = importlib.util.spec_from_file_location("agent_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert issubclass(module.AgentExecutor, AgentExecutorBase)
    return module.AgentExecutor()


@pytest.fixture(scope="module", params=sorted(FAMILY_TASKS))
def rollout(request, workspace, tiny_models, tmp_path_factory):
    """One native-video rollout of a task's first prompt by the bundle's agent module."""
    require_openrlhf()
    from transformers import AutoProcessor

    family = request.param
    model_dir = tiny_models[family]
    processor = AutoProcessor.from_pretrained(model_dir)
    spec = load_spec(workspace / "task_specs" / "tiny" / f"{FAMILY_TASKS[family]}.yaml")
    bundle = tmp_path_factory.mktemp(f"native-{family}")
    export = export_task_prompts(spec, workspace / "store", bundle, "native", processor)
    tasks_file = bundle / "tasks.resolved.json"
    write_tasks_file(tasks_file, [spec], chat_markers(processor))
    agent_file = bundle / "agent_func.py"
    agent_file.write_text(agent_module_text("test", tasks_file, max_videos=1), encoding="utf-8")
    dataset = prompt_dataset([export.file], processor)
    datasource, prompt, label, refs = dataset[0]
    engine = FakeEngine(processor.tokenizer, RESPONSE)
    params = SimpleNamespace(max_tokens=32, logprobs=None)
    executor = load_agent_executor(agent_file)
    result = asyncio.run(executor.execute(prompt, label, params, 4096, processor, engine, refs))
    kit = CachedSampleDataset(workspace / "store", spec=spec, processor=processor)
    index = next(i for i, row in enumerate(kit.rows)
                 if row["sample_id"] == decode_label(label).sample_id)  # fmt: skip
    return SimpleNamespace(family=family, model_dir=model_dir, processor=processor, engine=engine,
                           result=result, kit_item=kit[index], datasource=datasource,
                           spec=spec)  # fmt: skip


def test_agent_sends_vllm_one_placeholder_per_video_with_its_timing(rollout):
    [(rollout_ids, mm_data)] = rollout.engine.calls
    tokenizer = rollout.processor.tokenizer
    video_pad = tokenizer.convert_tokens_to_ids("<|video_pad|>")
    assert rollout_ids.count(video_pad) == 1  # vLLM expands it from the frames itself
    [(frames, meta)] = mm_data["video"]
    cached = rollout.kit_item["videos"][0]
    assert frames.dtype == cached.dtype and (frames == cached).all()  # the cached pixels
    assert meta["frames_indices"] == rollout.kit_item["video_metadata"][0]["frames_indices"]
    assert meta["fps"] == rollout.kit_item["video_metadata"][0]["fps"]
    assert meta["do_sample_frames"] is False


def test_training_inputs_are_the_kits_processor_outputs(rollout):
    result, kit = rollout.result, rollout.kit_item["model_inputs"]
    train_ids = result["observation_tokens"][: result["action_ranges"][0][0]]
    assert train_ids == kit["input_ids"].tolist()  # same prompt, same expansion
    mm = result["mm_train_inputs"]
    assert torch.equal(mm["pixel_values_videos"], kit["pixel_values_videos"])
    assert torch.equal(mm["video_grid_thw"], kit["video_grid_thw"])
    if rollout.family == "qwen2.5-vl":  # its M-RoPE time axis needs the seconds per patch
        assert torch.equal(torch.as_tensor(mm["second_per_grid_ts"]),
                           torch.as_tensor(kit["second_per_grid_ts"]))  # fmt: skip
    else:  # Qwen3-VL carries time as <t seconds> text tokens inside the prompt
        text = rollout.processor.decode(train_ids)
        assert "seconds>" in text
    response = rollout.processor.decode(
        result["observation_tokens"][result["action_ranges"][0][0] :]
    )
    assert response == RESPONSE
    assert result["reward"] == pytest.approx(1.0 if rollout.kit_item["answer"] == "3" else 0.1)
    assert rollout.datasource == rollout.spec.id


def kit_log_probs(model, item, response_ids: list[int]) -> torch.Tensor:
    """Log-probs of the response under the kit's own processor inputs (no OpenRLHF code)."""
    inputs = dict(item["model_inputs"])
    prompt_ids = inputs.pop("input_ids")
    inputs.pop("attention_mask")
    sequence = torch.cat([prompt_ids, torch.tensor(response_ids)]).unsqueeze(0)
    types = inputs.pop("mm_token_type_ids")
    types = torch.cat([types, torch.zeros(len(response_ids), dtype=types.dtype)]).unsqueeze(0)
    with torch.no_grad():
        logits = model(input_ids=sequence, mm_token_type_ids=types, **inputs).logits.float()
    log_probs = torch.log_softmax(logits[:, :-1], dim=-1)
    picked = log_probs.gather(-1, sequence[:, 1:].unsqueeze(-1)).squeeze(-1)
    return picked[:, -len(response_ids) :]


def openrlhf_log_probs(actor, result) -> torch.Tensor:
    """What OpenRLHF's experience maker asks the actor for, from the agent's output."""
    from openrlhf.utils.vlm_utils import merge_mm_train_inputs

    start, end = result["action_ranges"][0]
    sequence = torch.tensor(result["observation_tokens"]).unsqueeze(0)
    action_mask = torch.ones(1, end - start, dtype=torch.long)
    mm = merge_mm_train_inputs([[result["mm_train_inputs"]]], "cpu")
    with torch.no_grad():
        return actor(sequence, action_mask, torch.ones_like(sequence), **mm)


def test_actor_log_probs_equal_the_kits_processor_path_only_with_the_patch(rollout, monkeypatch):
    stub_flash_attn_kernels()
    from openrlhf.models import actor as actor_module

    from videorl_kit.adapters.openrlhf.patches import patch_actor_forward
    from videorl_kit.media.mrope import uses_qwen_positions

    monkeypatch.setattr(actor_module.Actor, "forward", actor_module.Actor.forward)  # restore after
    actor = actor_module.Actor(str(rollout.model_dir), attn_implementation="eager")
    actor.model.float().eval()  # same weights for both paths; fp32 to compare closely
    start, end = rollout.result["action_ranges"][0]
    response_ids = rollout.result["observation_tokens"][start:end]

    if getattr(actor_module.Actor.forward, "_videorl_kit_patched", False):
        pytest.fail("Actor.forward is already patched; another test leaked its patch")
    # stock 0.11.2 passes the video token types as token_type_ids, which Qwen-VL does not read
    unpatched = None
    if rollout.family == "qwen2.5-vl":  # M-RoPE positions from the ids alone: other logits
        unpatched = openrlhf_log_probs(actor, rollout.result)
    else:  # Qwen3-VL refuses video without mm_token_type_ids
        with pytest.raises(ValueError, match="mm_token_type_ids"):
            openrlhf_log_probs(actor, rollout.result)
    assert not uses_qwen_positions(actor.model)

    assert patch_actor_forward(actor_module)
    patched = openrlhf_log_probs(actor, rollout.result)
    # the patched forward gave the model Qwen's (and vLLM's) M-RoPE rule, as the evaluator does
    assert uses_qwen_positions(actor.model) == (rollout.family == "qwen2.5-vl")
    expected = kit_log_probs(actor.model, rollout.kit_item, response_ids)
    assert torch.isfinite(expected).all()
    if unpatched is not None:
        assert (unpatched - expected).abs().max() > 1e-4
    torch.testing.assert_close(patched, expected, rtol=0, atol=1e-5)
