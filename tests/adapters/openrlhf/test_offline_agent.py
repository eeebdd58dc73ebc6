"""Offline members through the bundle's agent, OpenRLHF 0.11.2's executor contract, on CPU.

A prompt's ``n`` samples are rolled out as OpenRLHF's ``LLMRayActor.generate_responses`` does
(``n`` ``execute`` coroutines of the bundle's ``AgentExecutor`` gathered in order; that module
needs vLLM, so its three lines are repeated here) with a fake vLLM engine, and each response
goes through OpenRLHF's own ``SamplesGenerator._process_response_into_experience``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import types
from types import SimpleNamespace

import pytest

from tests.adapters.openrlhf.conftest import require_openrlhf, stub_flash_attn_kernels
from tests.adapters.openrlhf.test_native_video import load_agent_executor, prompt_dataset
from tests.adapters.openrlhf.test_reward import FakeEngine
from videorl_kit.adapters.openrlhf.bundle import agent_module_text
from videorl_kit.adapters.openrlhf.chat import chat_markers
from videorl_kit.adapters.openrlhf.labels import decode_label
from videorl_kit.adapters.openrlhf.offline import offline_payload
from videorl_kit.adapters.openrlhf.prompts import export_task_prompts
from videorl_kit.adapters.openrlhf.reward import write_tasks_file
from videorl_kit.spec.loader import load_spec
from videorl_kit.train.offline.section import OfflineSection
from videorl_kit.train.offline.select import Candidate, OfflinePool

WRONG = "<think>I count them.</think><answer>7</answer><|im_end|>"  # the fake engine's answer
N = 4


def import_without_vllm(module: str):
    """Import an OpenRLHF module whose import chain reaches ``vllm.SamplingParams`` and
    OpenRLHF's vLLM engine module (both need vLLM, absent here); stand-ins for those names,
    unused by the code the tests call, let it import and are removed afterwards."""
    stand_ins = {}
    if module not in sys.modules and importlib.util.find_spec("vllm") is None:
        engine = types.ModuleType("openrlhf.trainer.ray.vllm_engine")
        engine.batch_vllm_engine_call = engine.create_vllm_engines = None
        stand_ins = {"vllm": types.SimpleNamespace(SamplingParams=object),
                     "openrlhf.trainer.ray.vllm_engine": engine}  # fmt: skip
    sys.modules.update(stand_ins)
    try:
        return importlib.import_module(module)
    finally:  # nothing else may take vLLM for installed
        for name in stand_ins:
            sys.modules.pop(name, None)


def process_into_experience(response: dict, max_len: int):
    """OpenRLHF's own conversion of a rollout into an ``Experience``."""
    generator = import_without_vllm("openrlhf.trainer.ppo_utils.samples_generator")
    SamplesGenerator = generator.SamplesGenerator
    return SamplesGenerator._process_response_into_experience(None, response, max_len=max_len)


@pytest.fixture(scope="module")
def bundle(workspace, tiny_models, tmp_path_factory):
    """A native-video bundle's prompts and tasks file, and a stored correct response for the
    first prompt's sample only."""
    require_openrlhf()
    from transformers import AutoProcessor

    root = tmp_path_factory.mktemp("offline-bundle")
    store = workspace / "store"
    processor = AutoProcessor.from_pretrained(tiny_models["qwen2.5-vl"])
    spec = load_spec(workspace / "task_specs" / "tiny" / "tiny-count.yaml")
    export = export_task_prompts(spec, store, root, "native", processor)
    tasks_file = root / "tasks.resolved.json"
    write_tasks_file(tasks_file, [spec], chat_markers(processor))
    dataset = prompt_dataset([export.file], processor)
    rows = [dataset[i] for i in range(len(dataset))]
    with_candidate = decode_label(rows[0][2])
    without = next(r for r in rows if decode_label(r[2]).sample_id != with_candidate.sample_id)
    stored = f"<think>one two three</think><answer>{with_candidate.answer}</answer>"
    # what load_pool reads from the store's trajectories table (polars: the main venv's tests)
    candidate = Candidate("t1", spec.id, with_candidate.sample_id, "curated", stored, 1.0, 1.0)
    return SimpleNamespace(root=root, store=store, processor=processor, spec=spec,
                           tasks_file=tasks_file, rows=rows, stored=stored, candidate=candidate,
                           with_candidate=rows[0], without=without)  # fmt: skip


def rollout(bundle, tmp_path, section: OfflineSection, row, max_tokens: int = 32, groups=1,
            candidate=None, tokenizer_ids=frozenset(), logprobs=None, concurrent=False):  # fmt: skip
    """``groups`` groups of ``N`` samples of one prompt row, as OpenRLHF's rollout actor runs
    them, through the bundle's agent module; returns the responses and the fake engine."""
    candidate = candidate or bundle.candidate
    key = (bundle.spec.id, candidate.sample_id)
    pool = OfflinePool(section, {key: [candidate]}, {bundle.spec.id: len(bundle.rows)})
    payload = offline_payload(pool, section, n=N, seed=0, tokenizer_ids=tokenizer_ids)
    offline_file = tmp_path / "offline.json"
    offline_file.write_text(json.dumps(payload))
    agent_file = tmp_path / "agent_func.py"
    agent_file.write_text(agent_module_text("t", bundle.tasks_file, 1, offline_file))
    executor = load_agent_executor(agent_file)
    engine = FakeEngine(bundle.processor.tokenizer, WRONG)
    _, prompt, label, refs = row
    params = SimpleNamespace(max_tokens=max_tokens, logprobs=logprobs)

    async def generate_responses():  # LLMRayActor.generate_responses, OpenRLHF 0.11.2
        tasks = [executor.execute(prompt=prompt, label=label, sampling_params=params,
                                  max_length=4096, hf_tokenizer=bundle.processor,
                                  llm_engine=engine, images=refs) for _ in range(N)]  # fmt: skip
        return await asyncio.gather(*tasks)

    if concurrent:  # the same prompt sent twice at once to one actor

        async def both():
            return await asyncio.gather(generate_responses(), generate_responses())

        first, second = asyncio.run(both())
        return first + second, engine
    responses = []
    for _ in range(groups):
        responses += asyncio.run(generate_responses())
    return responses, engine


def response_text(bundle, response) -> str:
    start, end = response["action_ranges"][0]
    return bundle.processor.decode(response["observation_tokens"][start:end])


def test_always_returns_the_stored_response_for_the_last_member_and_generates_the_rest(
    bundle, tmp_path
):
    section = OfflineSection(source="curated", correction="none")
    responses, engine = rollout(bundle, tmp_path, section, bundle.with_candidate, groups=2)
    assert len(engine.calls) == 2 * (N - 1)  # n - k generated per group, not n
    offline = [r["extra_logs"]["offline"] for r in responses]
    assert offline == [0.0, 0.0, 0.0, 1.0] * 2
    eot = bundle.processor.tokenizer.convert_tokens_to_ids("<|im_end|>")
    for response in responses:
        experience = process_into_experience(response, max_len=4096)
        if response["extra_logs"]["offline"]:
            assert response_text(bundle, response) == bundle.stored + "<|im_end|>"
            assert response["observation_tokens"][-1] == eot
            assert experience.rewards.item() == pytest.approx(1.0)  # scored: correct
            assert not experience.truncated.item()
        else:
            assert response_text(bundle, response) == WRONG
            assert experience.rewards.item() < 1.0
        assert experience.action_mask.sum().item() == (
            response["action_ranges"][0][1] - response["action_ranges"][0][0]
        )
    # the offline member's prompt and video inputs are those of the online members
    first, last = responses[0], responses[N - 1]
    start = first["action_ranges"][0][0]
    assert last["observation_tokens"][:start] == first["observation_tokens"][:start]
    for key, value in first["mm_train_inputs"].items():
        assert (last["mm_train_inputs"][key] == value).all()
    assert {tuple(sorted(r["extra_logs"])) for r in responses} == {
        tuple(sorted(responses[0]["extra_logs"]))
    }  # the same keys for every member (OpenRLHF stacks them)


def test_a_group_without_candidate_is_all_online(bundle, tmp_path):
    section = OfflineSection(source="curated", correction="none")
    responses, engine = rollout(bundle, tmp_path, section, bundle.without)
    assert len(engine.calls) == N
    assert all(r["extra_logs"]["offline"] == 0.0 for r in responses)


def test_the_stored_response_is_cut_to_the_budget_and_the_cut_recorded(bundle, tmp_path):
    section = OfflineSection(source="curated", correction="none")
    responses, _ = rollout(bundle, tmp_path, section, bundle.with_candidate, max_tokens=5)
    member = responses[-1]
    start, end = member["action_ranges"][0]
    assert end - start == 5 and member["truncated"]
    assert member["extra_logs"]["offline_truncated"] == 1.0
    assert process_into_experience(member, max_len=4096).truncated.item()


@pytest.mark.parametrize(("threshold", "mixed"), [(0.5, True), (0.0, False)])
def test_below_accuracy_generates_the_group_first_and_replaces_only_below(
    bundle, tmp_path, threshold, mixed
):
    section = OfflineSection(source="curated", when="below_accuracy",
                             accuracy_threshold=threshold, correction="recompute")  # fmt: skip
    responses, engine = rollout(bundle, tmp_path, section, bundle.with_candidate)
    assert len(engine.calls) == N  # every member generated and scored first: the cost
    offline = [r["extra_logs"]["offline"] for r in responses]
    assert offline == ([0.0, 0.0, 0.0, 1.0] if mixed else [0.0] * N)
    assert all(r["extra_logs"]["offline_online_accuracy"] == 0.0 for r in responses)


def test_the_offline_member_takes_part_in_openrlhfs_group_norm_advantage(bundle, tmp_path):
    """The group's Experiences (three online, wrong; one offline, correct) go through OpenRLHF
    0.11.2's own ``RemoteExperienceMaker.compute_advantages_and_returns`` with the GRPO
    estimator ``group_norm``: the offline member's advantage is the group normalisation's,
    the same formula as the online members'. The maker is the real class; its Ray actor
    groups are unused by this method, so none are passed; ``kl`` is zero as with
    ``init_kl_coef`` 0."""
    import torch

    stub_flash_attn_kernels()  # openrlhf.models imports flash_attn; its kernels need CUDA
    maker_module = import_without_vllm("openrlhf.trainer.ppo_utils.experience_maker")
    from openrlhf.trainer.ppo_utils.kl_controller import FixedKLController

    section = OfflineSection(source="curated", correction="none")
    responses, _ = rollout(bundle, tmp_path, section, bundle.with_candidate)
    experiences = []
    for index, response in enumerate(responses):
        experience = process_into_experience(response, max_len=4096)
        experience.index = [index]
        experience.kl = torch.zeros_like(experience.action_mask, dtype=torch.float32)
        experiences.append(experience)
    rewards = torch.cat([e.rewards.float() for e in experiences])
    assert rewards[-1] == pytest.approx(1.0) and (rewards[:-1] < 1.0).all()

    args = SimpleNamespace(
        algo=SimpleNamespace(advantage=SimpleNamespace(estimator="group_norm", gamma=1.0)),
        rollout=SimpleNamespace(n_samples_per_prompt=N),
        reward=SimpleNamespace(clip_range=None),
        data=SimpleNamespace(max_len=4096),
    )
    maker = maker_module.RemoteExperienceMaker(None, None, None, None, FixedKLController(0.0),
                                  SimpleNamespace(args=args), bundle.processor.tokenizer)  # fmt: skip
    maker.compute_advantages_and_returns(experiences)

    expected = (rewards - rewards.mean()) / (rewards.std() + 1e-9)
    for experience, value in zip(experiences, expected, strict=True):
        mask = experience.action_mask.bool()
        # REINFORCE-style returns: every response token carries the normalised reward
        assert torch.allclose(experience.advantages[mask], value.expand(int(mask.sum())))
        assert experience.info["group_reward_std"].item() == pytest.approx(rewards.std().item())
    offline = experiences[-1].advantages[experiences[-1].action_mask.bool()]
    assert (offline > 0).all()  # the correct offline member pulls the policy towards it
    assert all((e.advantages[e.action_mask.bool()] < 0).all() for e in experiences[:-1])


def test_truncated_is_gives_openrlhf_the_stored_behaviour_log_probs_and_its_tis_weights_them(
    bundle, tmp_path
):
    """``truncated_is`` sets OpenRLHF's token-level clip correction (which makes OpenRLHF's
    ``SamplesGenerator`` ask for ``logprobs=1``); the agent then returns the offline member's
    stored behaviour log-probs as ``rollout_log_probs``, OpenRLHF's
    ``_process_response_into_experience`` carries them, and OpenRLHF's own ``PolicyLoss``
    (built as ``ppo_actor.py`` builds it from the flags ``openrlhf_flags`` sets, see
    test_recipe_checks) weights the member's token losses by ``clamp(exp(old - mu), 0, cap)``."""
    import dataclasses

    import torch

    stub_flash_attn_kernels()
    from openrlhf.models.loss import PolicyLoss

    tokenizer = bundle.processor.tokenizer
    ids = tokenizer(bundle.stored, add_special_tokens=False)["input_ids"]
    behaviour = [-0.1 * (i + 1) for i in range(len(ids))]
    candidate = dataclasses.replace(bundle.candidate, token_ids=ids, tokenizer_id="tiny",
                                    behaviour_logprobs=behaviour)  # fmt: skip
    section = OfflineSection(source="curated", correction="truncated_is", is_cap=1.5)
    responses, _ = rollout(bundle, tmp_path, section, bundle.with_candidate, candidate=candidate,
                           tokenizer_ids=frozenset({"tiny"}), logprobs=1)  # fmt: skip
    member = process_into_experience(responses[-1], max_len=4096)
    mask = member.action_mask.bool()
    carried = member.rollout_log_probs[mask].tolist()
    assert carried[: len(ids)] == pytest.approx(behaviour)  # then the appended end token

    loss_fn = PolicyLoss(is_correction_level="token", is_correction_mode="clip",
                         is_correction_gating="ratio", is_correction_threshold=[0.0, 1.5])  # fmt: skip
    old = torch.full_like(member.rollout_log_probs, -0.3)
    advantages = torch.ones_like(old)
    loss, *_ = loss_fn(old, old, advantages, action_mask=member.action_mask,
                       rollout_log_probs=member.rollout_log_probs)  # fmt: skip
    weights = (old - member.rollout_log_probs).exp().clamp(0.0, 1.5)[mask]
    assert loss.item() == pytest.approx(-weights.mean().item(), rel=1e-5)
    assert weights.min().item() < 1.0 < weights.max().item() == pytest.approx(1.5)


def test_two_concurrent_calls_for_one_prompt_keep_their_groups_apart(bundle, tmp_path):
    """OpenRLHF's ``generate_responses`` gathers its ``n`` coroutines in order; two calls for
    the same sample running at once on one actor still get one offline member each, last."""
    section = OfflineSection(source="curated", correction="none")
    responses, engine = rollout(bundle, tmp_path, section, bundle.with_candidate, concurrent=True)
    assert [r["extra_logs"]["offline"] for r in responses] == [0.0, 0.0, 0.0, 1.0] * 2
    assert len(engine.calls) == 2 * (N - 1)
