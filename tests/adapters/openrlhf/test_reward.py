"""The bundle's reward_func, run by OpenRLHF's own single-turn executor with a fake vLLM engine.

This is the path a rollout actor takes: OpenRLHF loads reward_func.py by file path, tokenizes
the prompt (through the processor for image prompts), asks the engine for tokens, decodes
prompt + response with special tokens and calls reward_func in a thread.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from tests.adapters.openrlhf.conftest import REPO, require_openrlhf
from videorl_kit.adapters.openrlhf.bundle import reward_module_text
from videorl_kit.adapters.openrlhf.chat import chat_markers
from videorl_kit.adapters.openrlhf.labels import encode_label
from videorl_kit.adapters.openrlhf.media import write_png_frames
from videorl_kit.adapters.openrlhf.reward import ERROR_REASONS, BundleReward, write_tasks_file
from videorl_kit.core.verifiers import NoParams, register_verifier
from videorl_kit.spec.loader import load_spec
from videorl_kit.spec.models import TaskSpec


@register_verifier(name="test_always_raises", version=1, problem_types=["open_ended"])
class AlwaysRaises:
    """A verifier with a bug: every call raises."""

    def __init__(self, params: NoParams) -> None:
        self.params = params

    def score(self, answer_text, gold, options=None):
        raise RuntimeError("verifier bug")


class FakeEngine:
    """Stands in for a vLLM engine: returns the token ids of a fixed text."""

    def __init__(self, tokenizer, text: str) -> None:
        self.ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        self.text = text
        self.calls: list[tuple[list[int], object]] = []

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        self.calls.append((list(prompt_token_ids), multi_modal_data))
        output = SimpleNamespace(token_ids=list(self.ids), text=self.text, finish_reason="stop",
                                 logprobs=None)  # fmt: skip
        return SimpleNamespace(outputs=[output])


@pytest.fixture(scope="module")
def bundle(tmp_path_factory, tiny_models):
    """A reward module over three tasks (one with a raising verifier) and the tiny processor."""
    require_openrlhf()
    from transformers import AutoProcessor

    folder = tmp_path_factory.mktemp("reward-bundle")
    processor = AutoProcessor.from_pretrained(tiny_models["qwen2.5-vl"])
    broken = TaskSpec.model_validate({
        "id": "broken", "version": 1, "problem_type": "open_ended",
        "data": {"path": "rows.jsonl"}, "prompt": {"template": "{{ question }}"},
        "verifier": {"name": "test_always_raises", "version": 1},
    })  # fmt: skip
    specs = [
        load_spec(REPO / "task_specs" / "synth-count.yaml"),
        load_spec(REPO / "task_specs" / "synth-multiple-choice.yaml"),
        broken,
    ]
    tasks_file = folder / "tasks.resolved.json"
    write_tasks_file(tasks_file, specs, chat_markers(processor))
    reward_file = folder / "reward_func.py"
    reward_file.write_text(reward_module_text("test", tasks_file), encoding="utf-8")
    [image] = write_png_frames(folder / "img", np.full((1, 56, 56, 3), 90, dtype=np.uint8))
    return SimpleNamespace(reward_file=reward_file, tasks_file=tasks_file, processor=processor,
                           image=image)  # fmt: skip


def chat_prompt(processor, text: str, n_images: int = 0) -> str:
    content = [{"type": "image"} for _ in range(n_images)] + [{"type": "text", "text": text}]
    messages = [{"role": "user", "content": content}]
    return processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def run_executor(bundle, prompt: str, label, response: str, images=None) -> dict:
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    executor = SingleTurnAgentExecutor(str(bundle.reward_file))
    engine = FakeEngine(bundle.processor.tokenizer, response)
    params = SimpleNamespace(max_tokens=64, logprobs=None)
    return asyncio.run(
        executor.execute(prompt, label, params, 4096, bundle.processor, engine, images=images)
    )


COUNT = encode_label("synth-count", "c-1", "numerical", "3", None)
CHOICE = encode_label("synth-multiple-choice", "m-1", "multiple_choice", "B",
                      ["A. red", "B. blue", "C. green"])  # fmt: skip
BROKEN = encode_label("broken", "b-1", "open_ended", "a cat", None)


def test_each_task_is_scored_by_its_own_verifier(bundle):
    prompt = chat_prompt(bundle.processor, "How many squares? Answer in <answer></answer>.")
    right = run_executor(bundle, prompt, COUNT, "<think>one, two, three</think><answer>3</answer>")
    assert right["reward"] == pytest.approx(1.0)
    assert right["scores"] == 1.0
    logs = right["extra_logs"]
    assert logs["task/synth-count/accuracy"] == 1.0 and logs["task/synth-count/share"] == 1.0
    assert logs["task/synth-multiple-choice/share"] == 0.0
    assert all(logs[f"error/{reason}"] == 0.0 for reason in ERROR_REASONS)
    wrong_format = run_executor(bundle, prompt, COUNT, "The answer is 3.")
    assert wrong_format["scores"] == 1.0 and wrong_format["reward"] == pytest.approx(0.9)
    choice = run_executor(bundle, prompt, CHOICE, "<answer>blue</answer>")
    assert choice["reward"] == pytest.approx(1.0)
    assert choice["extra_logs"]["task/synth-multiple-choice/accuracy"] == 1.0
    hedged = run_executor(bundle, prompt, CHOICE, "<answer>A or B</answer>")
    assert hedged["scores"] == 0.0


def test_image_prompt_grades_the_response_not_the_prompt(bundle):
    # the prompt holds a right answer; grading query[len(prompt):] would find it there
    prompt = chat_prompt(bundle.processor, "Is it <answer>3</answer>? Count again.", n_images=1)
    result = run_executor(bundle, prompt, COUNT, "It is 4.", images=[str(bundle.image)])
    assert result["mm_train_inputs"]["image_grid_thw"].shape == (1, 3)  # the VLM path ran
    query = bundle.processor.decode(result["observation_tokens"], skip_special_tokens=False)
    assert not query.startswith(prompt)  # image placeholders expanded in the query
    assert result["scores"] == 0.0 and result["reward"] == 0.0


@pytest.mark.parametrize(
    ("label", "response", "reason"),
    [
        (BROKEN, "<answer>a cat</answer>", "verifier"),
        ("{not json", "<answer>3</answer>", "label"),
        (None, "<answer>3</answer>", "label"),
        (encode_label("no-such-task", "x", "numerical", "3", None), "<answer>3</answer>", "label"),
        (COUNT, "", "empty_response"),
        (COUNT, "   ", "empty_response"),
        (encode_label("synth-count", "c-2", "numerical", "three-ish", None), "<answer>3</answer>",
         "unverifiable"),
    ],
)  # fmt: skip
def test_failures_are_a_logged_zero_with_the_reason(bundle, caplog, label, response, reason):
    prompt = chat_prompt(bundle.processor, "How many?")
    with caplog.at_level(logging.WARNING, logger="videorl_kit.openrlhf.reward"):
        result = run_executor(bundle, prompt, label, response)
    assert result["reward"] == 0.0 and result["scores"] == 0.0  # never None: training goes on
    assert result["extra_logs"][f"error/{reason}"] == 1.0
    assert sum(result["extra_logs"][f"error/{r}"] for r in ERROR_REASONS) == 1.0
    assert any(f": {reason}: " in message for message in caplog.messages)


def test_every_sample_logs_the_same_keys(bundle):
    prompt = chat_prompt(bundle.processor, "How many?")
    keys = {
        frozenset(run_executor(bundle, prompt, label, "<answer>3</answer>")["extra_logs"])
        for label in (COUNT, CHOICE, BROKEN, "garbage")
    }
    assert len(keys) == 1  # OpenRLHF stacks extra_logs across a batch


def test_threads_agree_with_serial_calls(bundle):
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    reward_func = SingleTurnAgentExecutor(str(bundle.reward_file)).reward_func
    prompt = chat_prompt(bundle.processor, "How many?")
    header = prompt
    cases = []
    for index in range(120):
        label = (COUNT, CHOICE, BROKEN, "x")[index % 4]
        answer = ("3", "B", "blue", "4", "A or B", "")[index % 6]
        cases.append(([header + f"<answer>{answer}</answer><|im_end|>"], [prompt], [label]))
    serial = [reward_func(*case) for case in cases]
    with ThreadPoolExecutor(max_workers=8) as pool:
        threaded = list(pool.map(lambda case: reward_func(*case), cases))
    assert threaded == serial
    assert {s["rewards"] for s in serial} >= {0.0, 1.0}


def test_a_call_with_other_than_one_sample_is_a_logged_zero(bundle):
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    reward_func = SingleTurnAgentExecutor(str(bundle.reward_file)).reward_func
    prompt = chat_prompt(bundle.processor, "How many?")
    two = reward_func([prompt + "<answer>3</answer>"] * 2, [prompt] * 2, [COUNT] * 2)
    assert two["rewards"] == 0.0 and two["extra_logs"]["error/internal"] == 1.0
    assert reward_func([], [], [])["extra_logs"]["error/internal"] == 1.0


def test_reward_file_loads_only_its_own_format(tmp_path):
    from videorl_kit.core.errors import UserError

    path = tmp_path / "tasks.resolved.json"
    path.write_text('{"format": "something-else"}', encoding="utf-8")
    with pytest.raises(UserError, match=r"not a readable tasks\.resolved\.json"):
        BundleReward.from_file(path)
    with pytest.raises(UserError, match="No such file"):
        BundleReward.from_file(Path(tmp_path) / "missing.json")
