"""OpenRLHF 0.11.2's own parser and checks, run on argvs without Ray or vLLM."""

from __future__ import annotations

import pytest

from tests.adapters.openrlhf.conftest import require_openrlhf
from videorl_kit.adapters.openrlhf.parser_check import OpenRLHFParser

BASE = [
    "--actor.model_name_or_path", "/models/m",
    "--reward.remote_url", "/bundle/reward_func.py",
    "--algo.advantage.estimator", "group_norm",
    "--rollout.n_samples_per_prompt", "4",
]  # fmt: skip


@pytest.fixture(scope="module")
def parser() -> OpenRLHFParser:
    require_openrlhf()
    return OpenRLHFParser()


def test_accepted_argv_comes_back_hierarchized(parser):
    verdict = parser.check([*BASE, "--train.colocate_all", "--vllm.num_engines", "8"])
    assert verdict.accepted, verdict.error
    assert verdict.args["algo"]["advantage"]["estimator"] == "group_norm"
    assert verdict.args["reward"]["remote_url"] == ["/bundle/reward_func.py"]  # split by the checks
    assert verdict.args["critic"]["model_name_or_path"] is None  # non-gae: no critic


@pytest.mark.parametrize(
    ("argv", "kind", "message"),
    [
        (["--prompt_data", "x.jsonl"], "usage", "unrecognized arguments: --prompt_data"),
        (["--prompt_max_len", "1024"], "usage", "unrecognized arguments: --prompt_max_len"),
        (["--algo.advantage.is_correction_enable"], "usage", "unrecognized arguments"),
        (["--algo.advantage.estimator", "grpo"], "usage", "invalid choice: 'grpo'"),
        (["--rollout.n_samples_per_prompt", "1"], "assertion", "requires n_samples_per_prompt > 1"),
        (["--train.partial_rollout_enable"], "assertion", "requires --train.async_enable"),
        (["--data.max_images_per_prompt", "4", "--ds.packing_samples"], "assertion",
         "does not support --packing_samples"),
        (["--train.colocate_all", "--vllm.num_engines", "2"], "assertion",
         "must be equal to vllm_num_engines * vllm_tensor_parallel_size"),
        (["--rollout.batch_size", "1", "--rollout.micro_batch_size", "4"], "assertion",
         "number of sample batches must be greater than or equal"),
    ],
)  # fmt: skip
def test_refusals_carry_openrlhfs_own_message(parser, argv, kind, message):
    verdict = parser.check([*BASE, *argv])
    assert not verdict.accepted
    assert verdict.kind == kind
    assert message in verdict.error


def test_printed_overrides_come_back_as_warnings(parser):
    verdict = parser.check([*BASE, "--vllm.num_engines", "8", "--vllm.enable_sleep"])
    assert verdict.accepted
    assert any("enable_sleep to False" in line for line in verdict.warnings)
    assert verdict.args["vllm"]["enable_sleep"] is False


def test_a_crash_of_the_checks_is_reported_not_raised(parser):
    # gae without a reward model: OpenRLHF's checks call .split on None
    verdict = parser.check(["--actor.model_name_or_path", "m"])
    assert verdict.kind == "exception"
    assert "AttributeError" in verdict.error
