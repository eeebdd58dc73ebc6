"""The algorithm table: every name on every backend, checked against TRL's own config classes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from videorl_kit.train.algorithms import (
    ALGORITHMS,
    BACKENDS,
    backend_options,
    canonical_algorithm,
    markdown_table,
    resolve_params,
)

REPO = Path(__file__).resolve().parents[2]
CASES = [(name, backend) for name in ALGORITHMS for backend in BACKENDS]


def test_docs_show_the_table_as_it_is() -> None:
    assert markdown_table() in (REPO / "docs" / "algorithms.md").read_text()


@pytest.mark.parametrize(("name", "backend"), CASES)
def test_every_algorithm_maps_or_is_refused_naming_the_backend(name: str, backend: str) -> None:
    params = resolve_params(name, {"dynamic_sampling": False}, max_new_tokens=64)
    options, problems = backend_options(name, params, backend)
    if isinstance(ALGORITHMS[name].backends[backend], str):
        assert options == {} and len(problems) == 1
        assert problems[0].param is None and f"backend {backend!r} cannot run {name}" in (
            problems[0].message
        )
    else:
        assert problems == [] and options


@pytest.mark.parametrize("name", [n for n in ALGORITHMS if n != "reinforce_pp"])
def test_trl_options_build_trls_own_config(name: str, tmp_path: Path) -> None:
    """Every TRL option is a real GRPOConfig/RLOOConfig field that its __post_init__ accepts."""
    from trl import GRPOConfig, RLOOConfig

    params = resolve_params(name, {"dynamic_sampling": False}, max_new_tokens=64)
    options, _ = backend_options(name, params, "trl")
    config_class = {"grpo": GRPOConfig, "rloo": RLOOConfig}[options.pop("trainer")]
    options.pop("overlong_reward", None)
    fields = {f.name for f in dataclasses.fields(config_class)}
    assert set(options) <= fields
    config = config_class(
        output_dir=str(tmp_path), use_cpu=True, bf16=False, per_device_train_batch_size=4,
        num_generations=4, report_to=[], **options,
    )  # fmt: skip
    for key, value in options.items():
        assert getattr(config, key) == value


def test_names_and_aliases() -> None:
    assert canonical_algorithm("GRPO") == "grpo"
    assert canonical_algorithm("Dr.GRPO") == canonical_algorithm("dr-grpo") == "dr_grpo"
    assert canonical_algorithm("REINFORCE++") == "reinforce_pp"
    assert canonical_algorithm("ppo") is None


def test_dapo_overlong_shaping_and_dynamic_sampling_per_backend() -> None:
    params = resolve_params("dapo", {}, max_new_tokens=200)
    assert params["overlong_buffer"] == 40
    openrlhf, _ = backend_options("dapo", params, "openrlhf")
    assert openrlhf["--algo.dynamic_filtering_enable"] is True
    assert openrlhf["--algo.dynamic_filtering_range"] == [0.0, 1.0]
    assert openrlhf["--reward.overlong_buffer_len"] == 40
    assert openrlhf["--actor.eps_clip_low_high"] == [0.2, 0.28]
    trl, problems = backend_options("dapo", params, "trl")
    assert [p.param for p in problems] == ["dynamic_sampling"]
    assert trl["overlong_reward"] == {"soft_punish_cache": 40, "weight": 1.0}
