"""``openrlhf.extra_args`` against OpenRLHF 0.11.2's own argument parser.

The kit's table of OpenRLHF's flags is the parser's; the kit reads a key the way the parser
reads it (``--flag=value``, unique prefixes); every other spelling of a flag, and every value
the parser would read as a flag, really overrides what the recipe sets in OpenRLHF's final
arguments (shown here with OpenRLHF's own code) and is refused by ``validate`` first.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import pytest

from tests.adapters.openrlhf.conftest import REPO, require_openrlhf
from tests.adapters.openrlhf.test_recipe_checks import argv_for
from videorl_kit.adapters.openrlhf.flags import OPENRLHF_FLAGS, key_problem, read_key
from videorl_kit.adapters.openrlhf.limits import extra_args_problems
from videorl_kit.train.recipe import load_recipe

EVIL = "/tmp/evil.py"


@pytest.fixture(scope="module")
def parser():
    require_openrlhf()
    from videorl_kit.adapters.openrlhf.parser_check import OpenRLHFParser

    return OpenRLHFParser()


@pytest.fixture(scope="module")
def argparser(parser) -> argparse.ArgumentParser:
    return parser.argument_parser()


def _recipe_data(extra: dict[str, Any]) -> dict[str, Any]:
    loaded = load_recipe(REPO / "recipes" / "qwen2.5-vl-7b-grpo.yaml", backend="openrlhf")
    data = loaded.recipe.model_dump(mode="json")
    data["algorithm"] = {"name": "grpo", "params": {}}
    data["openrlhf"]["extra_args"] = extra
    return data


def test_the_flag_table_is_openrlhfs_parser(argparser):
    table = {}
    for action in argparser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        for option in action.option_strings:
            table[option] = 1 if action.nargs is None else action.nargs
    assert argparser.allow_abbrev and argparser.prefix_chars == "-"
    assert table == OPENRLHF_FLAGS


def _openrlhf_reads(argparser: argparse.ArgumentParser, key: str) -> tuple[str, ...] | str:
    """The flag(s) Python 3.11's argparse reads ``key`` as, in OpenRLHF's parser."""
    try:
        found = argparser._parse_optional(key)
    except SystemExit:  # several flags start with the key: argparse refuses it as ambiguous
        return "ambiguous"
    if found is None:
        return "positional"
    action, option, _ = found
    return () if action is None else (option,)


def _keys() -> list[str]:
    keys = []
    for flag in OPENRLHF_FLAGS:
        keys += [flag[:end] for end in range(3, len(flag) + 1)]  # every prefix, the flag itself
        keys += [f"{flag}=x", f"{flag[:-1]}=1", f"{flag}x"]
    return [*dict.fromkeys(keys), "--he", "--help", "--no.such", "--=x", "--ds.p=bf16"]


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="argparse's reading of Python 3.11")
def test_the_kit_reads_every_key_as_openrlhfs_parser_does(argparser):
    disagree = []
    for key in _keys():
        theirs = _openrlhf_reads(argparser, key)
        ours = read_key(key).flags
        ours_kind = "ambiguous" if len(ours) > 1 else ours
        if theirs != ours_kind:
            disagree.append((key, theirs, ours))
        if ours_kind == (key,) and key != "--help":
            assert key_problem(key) is None, key
        else:
            assert key_problem(key), key  # only the full spelling of a flag is taken
    assert not disagree, disagree[:10]


# each: extra_args, then what OpenRLHF's final args hold (dotted path, value) with it
SMUGGLED = {
    "agent_eq": ({"--train.agent_func_path=/tmp/evil.py": True}, ("train.agent_func_path", EVIL)),
    "agent_prefix": ({"--train.agent_func_pat": EVIL}, ("train.agent_func_path", EVIL)),
    "model_prefix": (
        {"--actor.model_name_or_pat": "/tmp/m"}, ("actor.model_name_or_path", "/tmp/m")
    ),
    "seed_eq_prefix": ({"--train.se=7": True}, ("train.seed", 7)),
    "switch_value": (
        {"--vllm.enforce_eager": f"--train.agent_func_path={EVIL}"},
        ("train.agent_func_path", EVIL),
    ),
    "list_value": (
        {"--ds.param_dtype": ["bf16", "--train.agent_func_path", EVIL]},
        ("train.agent_func_path", EVIL),
    ),
    "nargs_plus_value": (
        {"--algo.advantage.is_correction_threshold": [2.0, "--train.agent_func_pat", EVIL]},
        ("train.agent_func_path", EVIL),
    ),
    "switch_list_value": (
        {"--ds.adam_offload": ["--train.agent_func_pat", EVIL]},
        ("train.agent_func_path", EVIL),
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(SMUGGLED))
def test_every_other_spelling_overrides_the_recipe_in_openrlhf_and_is_refused(parser, case):
    extra, (path, value) = SMUGGLED[case]
    verdict = parser.check(argv_for(_recipe_data(extra)))
    assert verdict.accepted, verdict.error
    node: Any = verdict.args
    for part in path.split("."):
        node = node[part]
    assert node == value  # the hazard is real in OpenRLHF's own code
    problems = extra_args_problems(extra, colocate=True)
    assert [where for where, _ in problems] == [f"openrlhf.extra_args.{next(iter(extra))}"]


def test_a_prefix_of_packing_turns_packing_on_in_openrlhf_and_is_refused(parser):
    extra = {"--ds.packing_sample": True}
    verdict = parser.check(argv_for(_recipe_data(extra)))
    assert not verdict.accepted and "does not support --packing_samples" in verdict.error
    [(where, message)] = extra_args_problems(extra, colocate=True)
    assert where == "openrlhf.extra_args.--ds.packing_sample"
    assert "--ds.packing_samples" in message


ACCEPTED = {
    "--ds.param_dtype": "bf16",
    "--ds.attn_implementation": "flash_attention_2",
    "--actor.adam.betas": [0.9, 0.95],
    "--reward.clip_range": [-5, 5],
    "--actor.entropy_coef": -0.001,
    "--ds.lora.target_modules": ["q_proj", "v_proj"],
    "--actor.gradient_checkpointing_enable": True,
    "--vllm.enforce_eager": False,
}


def test_values_the_kit_takes_reach_openrlhf_as_written(parser):
    assert extra_args_problems(ACCEPTED, colocate=True) == []
    plain = parser.check(argv_for(_recipe_data({})))
    verdict = parser.check(argv_for(_recipe_data(ACCEPTED)))
    assert verdict.accepted, verdict.error
    ds, actor = verdict.args["ds"], verdict.args["actor"]
    assert (ds["param_dtype"], ds["attn_implementation"]) == ("bf16", "flash_attention_2")
    assert actor["adam"]["betas"] == [0.9, 0.95] and verdict.args["reward"]["clip_range"] == [-5, 5]
    assert actor["entropy_coef"] == -0.001 and ds["lora"]["target_modules"] == ["q_proj", "v_proj"]
    assert actor["gradient_checkpointing_enable"] and not verdict.args["vllm"]["enforce_eager"]
    for part in ("train", "data"):  # what the recipe sets is untouched
        assert verdict.args[part] == plain.args[part]


@pytest.mark.parametrize("value", [-1e-05, "-x", "--", ["bf16", "-y"]])
def test_a_value_openrlhfs_parser_reads_as_a_flag_is_refused_first(parser, value):
    flag = "--ds.param_dtype" if isinstance(value, list) else "--actor.entropy_coef"
    verdict = parser.check(argv_for(_recipe_data({flag: value})))
    assert not verdict.accepted and verdict.kind == "usage", verdict
    [(where, message)] = extra_args_problems({flag: value}, colocate=True)
    assert where == f"openrlhf.extra_args.{flag}"
    assert "OpenRLHF's parser would read it as a flag" in message or "not a list" in message
