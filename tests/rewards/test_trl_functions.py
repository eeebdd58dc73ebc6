"""The TRL reward functions through TRL's own reward-calling code (GRPOTrainer on a tiny,
offline text model): one function per task, None for other tasks and masked verdicts; metrics
per problem type and data source; sampled completions to completions.jsonl."""

from __future__ import annotations

import json
import math
import pickle
from pathlib import Path

import pytest

from tests.public_layout import write_mixed
from videorl_kit.rewards.trl_functions import (
    TaskRewardFunction,
    completion_text,
    trl_reward_functions,
)
from videorl_kit.spec import load_spec
from videorl_kit.spec.data import iter_samples
from videorl_kit.spec.prompt import render_prompt
from videorl_kit.train.completions import COMPLETIONS_FILE, CompletionLog, read_completions

CHAT = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@pytest.fixture(scope="module")
def specs(tmp_path_factory: pytest.TempPathFactory) -> list:
    folder = tmp_path_factory.mktemp("trl")
    mixed = load_spec(write_mixed(folder / "mixed"))
    boolean = load_spec(Path("task_specs/synth-boolean.yaml"))
    return [mixed, boolean]


def dataset_rows(spec) -> list[dict]:
    """What a dataset of the kit's samples carries: the prompt plus the reward columns."""
    return [
        {
            "prompt": render_prompt(spec, s),
            "task_id": s.task_id,
            "answer": s.answer,
            "options": s.options,
            "problem_type": s.problem_type.value,
            "breakdown": json.dumps(
                {"problem_type": s.problem_type.value, "data_source": f"src/{i % 2}"}
            ),
        }
        for i, s in enumerate(iter_samples(spec))
    ]


@pytest.fixture(scope="module")
def trainer(specs, tmp_path_factory: pytest.TempPathFactory):
    from datasets import Dataset
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from tests.store.tiny_processor import build_tokenizer

    tokenizer = build_tokenizer()
    tokenizer.chat_template = CHAT
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=256,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )  # fmt: skip
    rows = dataset_rows(specs[0])[:4]
    rows += [{**r, "task_id": "synth-boolean", "answer": "yes", "problem_type": "boolean",
              "options": None} for r in rows[:2]]  # fmt: skip
    args = GRPOConfig(
        output_dir=str(tmp_path_factory.mktemp("out")), use_cpu=True, bf16=False,
        per_device_train_batch_size=6, num_generations=2, max_completion_length=4,
        max_steps=1, report_to=[], logging_steps=1, save_strategy="no", seed=0,
    )  # fmt: skip
    log = CompletionLog(tmp_path_factory.mktemp("run") / COMPLETIONS_FILE, every=10, per_step=3)
    return GRPOTrainer(
        model=LlamaForCausalLM(config),
        reward_funcs=trl_reward_functions(specs, log),
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
    )


def test_trl_calls_them_and_logs_one_metric_per_task(trainer, specs) -> None:
    assert trainer.reward_func_names == ["mixed", "synth-boolean"]
    trainer.train()
    logged = trainer.state.log_history[0]
    for task in ("mixed", "synth-boolean"):
        assert f"rewards/{task}/mean" in logged
        assert f"{task}/masked" in logged
    # the mixed task per problem type of its rows and per data source ("/" made "_")
    types = {r["problem_type"] for r in dataset_rows(specs[0])[:4]}
    by_type = {k.split("/")[2] for k in logged if k.startswith("mixed/by_problem_type/")}
    assert by_type and by_type <= types
    for metric in ("reward", "accuracy", "format"):
        assert f"mixed/by_data_source/src_0/{metric}" in logged
        assert f"synth-boolean/by_data_source/src_1/{metric}" in logged


def test_completions_are_written_with_gold_and_extracted(trainer) -> None:
    """Step 1 is logged: prompt text, response, extracted answer, gold and reward per task."""
    log = trainer.reward_funcs[0].on_results
    records = read_completions(log.path)
    assert {r["step"] for r in records} == {1}
    assert {r["task"] for r in records} == {"mixed", "synth-boolean"}
    assert sum(r["task"] == "mixed" for r in records) == 3  # per_step per task
    for record in records:
        assert record["prompt"] and isinstance(record["response"], str)
        assert record["gold"] is not None and record["status"] in ("ok", "unverifiable", "error")
        if record["status"] == "ok":
            assert 0.0 <= record["reward"] <= 1.0 and "extracted" in record


def test_rewards_through_trls_calculate_rewards(trainer, specs) -> None:
    rows = dataset_rows(specs[0])
    inputs = [*rows[:3], {**rows[0], "task_id": "synth-boolean", "answer": "no",
                          "problem_type": "boolean", "options": None}]  # fmt: skip
    completions = [
        "<answer>B</answer>",  # multiple choice, right
        [{"role": "assistant", "content": "<answer>9</answer>"}],  # numerical, wrong
        [{"role": "assistant", "content": [{"type": "text", "text": "<answer>STOP</answer>"}]}],
        "<answer>no</answer>",  # the boolean task's row
    ]
    prompts = [row["prompt"] for row in inputs]
    rewards = trainer._calculate_rewards(inputs, prompts, completions, [[1]] * 4)
    mixed, boolean = rewards[:, 0].tolist(), rewards[:, 1].tolist()
    assert mixed[:3] == pytest.approx([1.0, 0.1, 1.0]) and math.isnan(mixed[3])
    assert all(math.isnan(v) for v in boolean[:3]) and boolean[3] == pytest.approx(1.0)


def test_unverifiable_rows_are_none_and_columns_are_checked(specs) -> None:
    mixed = TaskRewardFunction.from_spec(specs[0])
    rewards = mixed(
        prompts=["p"] * 3,
        completions=["<answer>5</answer>"] * 3,
        task_id=["mixed"] * 3,
        answer=["5", "five or six", "5"],
        options=[None] * 3,
        problem_type=["numerical", "numerical", "poetry"],
    )
    assert rewards == [1.0, None, None]
    with pytest.raises(ValueError, match="no 'problem_type' column"):
        mixed(prompts=["p"], completions=["x"], task_id=["mixed"], answer=["1"])
    with pytest.raises(ValueError, match="no 'answer' column"):
        mixed(prompts=["p"], completions=["x"], task_id=["mixed"])
    with pytest.raises(ValueError, match="column 'answer' has 2 values for 1 completions"):
        mixed(prompts=["p"], completions=["x"], answer=["1", "2"], problem_type=["ocr"])
    one_task = TaskRewardFunction.from_spec(specs[1])  # a fixed type: no problem_type column
    assert one_task(prompts=["p"], completions=["<answer>yes</answer>"], answer=["yes"]) == [1.0]


def test_picklable_and_names(specs) -> None:
    fn = pickle.loads(pickle.dumps(TaskRewardFunction.from_spec(specs[0])))
    assert fn.__name__ == "mixed"
    assert fn(prompts=["p"], completions=["<answer>B</answer>"], answer=["B"],
              problem_type=["mcq"], options=[["A. x", "B. y"]]) == [1.0]  # fmt: skip
    with pytest.raises(ValueError, match="share the task id 'mixed'"):
        trl_reward_functions([specs[0], specs[0]])
    assert completion_text(None) == "" and completion_text({"content": "A"}) == "A"
