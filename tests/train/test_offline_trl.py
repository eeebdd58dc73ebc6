"""Mixed offline/online GRPO groups on TRL's real GRPOTrainer with the tiny model, on CPU.

A spy on the mixin's last method (it records what the trainer decided and computed, and
changes nothing) lets each test check group composition, tokens, advantages and weights.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from videorl_kit.adapters.trl import TrlBackend
from videorl_kit.adapters.trl.offline import OfflineMixing
from videorl_kit.train.demo import write_demo_recipe
from videorl_kit.train.metrics import read_metrics
from videorl_kit.train.offline.importer import import_trajectories
from videorl_kit.train.offline.tokens import load_tokenizer
from videorl_kit.train.plan import plan_training
from videorl_kit.train.plot import plot_run
from videorl_kit.train.run import run_training

LONG = "<think>counting</think><answer>{}</answer>"  # 16 tokens + the end token
SHORT = "<answer>{}</answer>"  # 6 tokens + the end token
WITH_CANDIDATES = {"synth-count-0000": "2", "synth-image-count-0000": "1"}
RECIPE = """\
id: offline-grpo
model: tiny:qwen2.5-vl
tasks: [demo.yaml]
store: store
algorithm: {{name: grpo, params: {{kl_coef: 0.0}}}}
rollout: {{group_size: 4, max_new_tokens: {max_new}}}
optim: {{lr: 1.0e-3, prompts_per_step: {prompts}, micro_batch_size: {micro}, steps: {steps}}}
trl: {{save_steps: {save_steps}}}
output_dir: {output}
seed: 0
offline: {offline}
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """The demo task's store with two trajectories (a long and a short one, with token ids and
    behaviour log-probs) for two of its four samples."""
    folder = write_demo_recipe(tmp_path_factory.mktemp("offline-trl")).parent
    tokenizer = load_tokenizer("tiny:qwen2.5-vl")
    rows = []
    for sample, gold in WITH_CANDIDATES.items():
        for text, logprob in ((LONG.format(gold), -0.1), (SHORT.format(gold), -20.0)):
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
            rows.append({"task_id": "demo", "sample_id": sample, "response": text,
                         "token_ids": ids, "tokenizer": "tiny:qwen2.5-vl",
                         "logprobs": [logprob] * len(ids)})  # fmt: skip
    (folder / "curated.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_trajectories([folder / "curated.jsonl"], folder / "store", source="curated")
    return folder


@pytest.fixture
def spy(monkeypatch) -> list[dict]:
    """What the mixin decided and TRL computed, per generation batch."""
    seen: list[dict] = []
    original = OfflineMixing._offline_finish

    def record(self, output, batch):
        before = output["advantages"].clone()
        output = original(self, output, batch)
        seen.append({"batch": batch, "before": before, "after": output["advantages"].clone(),
                     "completion_ids": output["completion_ids"].clone(),
                     "completion_mask": output["completion_mask"].clone(),
                     "eot": self._offline_end_id, "weights": self.reward_weights.clone(),
                     "n": self.num_generations})  # fmt: skip
        return output

    monkeypatch.setattr(OfflineMixing, "_offline_finish", record)
    return seen


def run(demo: Path, tmp_path: Path, offline: str, *, steps: int = 2, max_new: int = 24,
        save_steps: int = 100, name: str = "run", max_steps: int | None = None,
        resume: bool = False, prompts: int = 2) -> Path:  # fmt: skip
    recipe = demo / f"{tmp_path.name}-{name}.yaml"  # next to the demo task and its store
    output = tmp_path / "runs" / name
    recipe.write_text(RECIPE.format(max_new=max_new, steps=steps, save_steps=save_steps,
                                    output=output, offline=offline, prompts=prompts,
                                    micro=4 * prompts))  # fmt: skip
    run_training(plan_training(recipe, max_steps=max_steps, resume=resume), TrlBackend())
    return output


def groups(record: dict) -> list[list[int]]:
    n = record["n"]
    rows = len(record["batch"].inputs)
    return [list(range(start, start + n)) for start in range(0, rows, n)]


def test_always_fills_the_last_k_members_and_generates_only_the_rest(demo, tmp_path, spy):
    output = run(demo, tmp_path, "{source: curated, per_group: 2, correction: none}")
    assert len(spy) == 2
    seen_without = 0
    for record in spy:
        batch = record["batch"]
        for rows in groups(record):
            sample = batch.inputs[rows[0]]["sample_id"]
            offline = [r for r in rows if r in batch.members]
            if sample in WITH_CANDIDATES:
                assert offline == rows[-2:]  # the last k = 2 members
                texts = {batch.members[r].candidate.response for r in offline}
                gold = WITH_CANDIDATES[sample]
                assert texts == {LONG.format(gold), SHORT.format(gold)}  # two distinct ones
            else:
                seen_without += 1
                assert offline == []
        assert batch.generated == len(batch.inputs) - len(batch.members)  # n - k, not n
    assert seen_without == 2  # the two samples without a candidate came up too
    records = read_metrics(output / "metrics.jsonl")
    assert [r["offline/generated"] for r in records] == [8 - len(r["batch"].members) for r in spy]
    assert sum(r["offline/demo/mixed"] for r in records) == 2
    assert all(r["offline/demo/groups"] == 2 for r in records)


def test_offline_members_end_with_the_end_token_and_take_part_in_the_advantage(demo, tmp_path, spy):
    run(demo, tmp_path, "{source: curated, per_group: 2, correction: none}")
    checked = 0
    for record in spy:
        batch = record["batch"]
        rewards = (batch.rewards_per_func * record["weights"]).nansum(dim=1)
        for rows in groups(record):
            group = rewards[rows]
            expected = (group - group.mean()) / (group.std() + 1e-4)  # TRL's group scaling
            torch.testing.assert_close(record["before"][rows], expected)
        for row, member in batch.members.items():
            ids = record["completion_ids"][row][record["completion_mask"][row].bool()].tolist()
            assert ids == member.tokens.ids and ids[-1] == record["eot"]
            assert member.candidate.token_ids == ids[:-1]  # the stored ids, then the end token
            assert rewards[row].item() == pytest.approx(1.0)  # scored by the task's reward
            checked += 1
    assert checked == 4
    assert all(torch.equal(r["before"], r["after"]) for r in spy)  # correction none: unchanged


def test_below_accuracy_replaces_members_only_of_groups_below_the_threshold(demo, tmp_path, spy):
    never = run(demo, tmp_path, "{source: curated, when: below_accuracy, accuracy_threshold: 0.0,"
                " correction: recompute}", name="never")  # fmt: skip
    assert all(not r["batch"].members for r in spy)  # an accuracy is never below 0
    assert all(r["batch"].generated == 8 for r in spy)  # every member is generated first
    records = read_metrics(never / "metrics.jsonl")
    assert all(r["offline/demo/mixed"] == 0 for r in records)
    spy.clear()
    run(demo, tmp_path, "{source: curated, when: below_accuracy, accuracy_threshold: 1.0,"
        " correction: recompute}", name="always-below")  # fmt: skip
    mixed = 0
    for record in spy:
        batch = record["batch"]
        assert batch.generated == 8  # generated, scored, then replaced: the cost
        for rows in groups(record):
            accuracy = batch.group_accuracy[batch.group_of[rows[0]]]
            sample = batch.inputs[rows[0]]["sample_id"]
            offline = [r for r in rows if r in batch.members]
            if sample in WITH_CANDIDATES and accuracy < 1.0:
                assert offline == rows[-1:]  # per_group 1: the last member
                mixed += 1
            else:
                assert offline == []
    assert mixed == 2
    # recompute: the current policy's log-probs are the old ones (ratio 1), advantages untouched
    assert all(torch.equal(r["before"], r["after"]) for r in spy)


def test_long_responses_are_cut_to_max_new_tokens_and_the_cut_recorded(demo, tmp_path, spy):
    output = run(demo, tmp_path, "{source: curated, per_group: 2, correction: none}", max_new=10)
    members = [m for r in spy for m in r["batch"].members.values()]
    long = [m for m in members if m.candidate.response.startswith("<think>")]
    short = [m for m in members if not m.candidate.response.startswith("<think>")]
    assert long and short
    for member in long:
        assert member.tokens.truncated and len(member.tokens.ids) == 10
        assert member.tokens.ids == member.candidate.token_ids[:10]  # no end token: cut
    for member in short:
        assert not member.tokens.truncated and len(member.tokens.ids) == 7
    records = read_metrics(output / "metrics.jsonl")
    shares = [r["offline/demo/truncated"] for r in records if "offline/demo/truncated" in r]
    assert shares and all(share == pytest.approx(0.5) for share in shares)  # one of two cut


def test_truncated_is_weights_only_offline_tokens_by_the_capped_ratio(demo, tmp_path, spy):
    output = run(demo, tmp_path, "{source: curated, per_group: 2, correction: truncated_is,"
                 " is_cap: 1.5}")  # fmt: skip
    for record in spy:
        batch, before, after = record["batch"], record["before"], record["after"]
        if not batch.members:
            assert torch.equal(after, before)
            continue
        assert after.dim() == 2
        for row in range(after.size(0)):
            member = batch.members.get(row)
            if member is None:
                assert torch.equal(after[row], before[row].expand_as(after[row]))
                continue
            length = len(member.candidate.token_ids)
            weights = after[row, :length] / before[row]
            if member.candidate.behaviour_logprobs[0] == -20.0:  # far likelier now: capped
                torch.testing.assert_close(weights, torch.full_like(weights, 1.5))
            else:  # likelier under the behaviour policy than the tiny model: tiny weights
                assert (weights > 0).all() and (weights < 0.05).all()
            end = after[row, length] / before[row]  # the appended end token: π(end) ≤ 1
            assert 0 < end <= 1
    records = read_metrics(output / "metrics.jsonl")
    assert any("offline/is_weight" in r for r in records)


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return load_file(str(folder / "model.safetensors"))


def test_a_mixed_run_resumes_to_the_same_state_as_an_uninterrupted_one(demo, tmp_path, spy):
    """One prompt a step: the four steps are one pass over the demo's four samples, so the
    resume is not at an epoch boundary (where TRL's sampler restarts its shuffle, with or
    without offline mixing)."""
    offline = "{source: curated, select: random, per_group: 1, correction: none}"
    settings = {"steps": 4, "save_steps": 2, "prompts": 1}
    straight = run(demo, tmp_path, offline, name="straight", **settings)
    run(demo, tmp_path, offline, name="resumed", max_steps=2, **settings)
    resumed = run(demo, tmp_path, offline, name="resumed", resume=True, **settings)
    drop = {"step_time", "train_runtime", "train_samples_per_second", "train_steps_per_second"}

    def records(folder: Path) -> list[dict]:
        return [{k: v for k, v in r.items() if k not in drop}
                for r in read_metrics(folder / "metrics.jsonl")]  # fmt: skip

    assert records(resumed) == records(straight)
    assert sum(r["offline/demo/mixed"] for r in records(straight)) >= 1
    a, b = _weights(straight / "model"), _weights(resumed / "model")
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0, msg=key)
    paths = {p.name for p in plot_run(straight)}
    assert {"offline_mixed.png", "offline_reward.png", "offline_advantage.png",
            "offline_online_accuracy.png"} <= paths  # fmt: skip
    assert not math.isnan(records(straight)[0]["offline/demo/online_accuracy"])
    shutil.rmtree(tmp_path / "runs")
