"""Algorithms by name, and what each one means in every backend's own options (one table).

A recipe says ``algorithm: {name: dapo, params: {clip_high: 0.3}}``. :data:`ALGORITHMS` holds,
per algorithm, its default parameters and the options that select it in each backend
(TRL 1.16 ``GRPOConfig`` / ``RLOOConfig`` fields, OpenRLHF 0.11.2 dotted flags);
:data:`PARAMETER_OPTIONS` says where each parameter goes in each backend; :data:`LIMITS` lists
the parameter values a backend's trainer cannot honour. :func:`backend_options` combines
them and returns the problems instead of ever falling back silently: an algorithm or a
parameter value a backend cannot do is an error naming the backend.

``docs/algorithms.md`` shows the same table (:func:`markdown_table` writes it; a test keeps
the two equal).

Example:
    >>> params = resolve_params("dapo", {"dynamic_sampling": False}, max_new_tokens=100)
    >>> options, problems = backend_options("dapo", params, "trl")
    >>> options["loss_type"], options["epsilon_high"], problems
    ('dapo', 0.28, [])
    >>> backend_options("dapo", resolve_params("dapo", {}, max_new_tokens=100), "trl")[1][0].param
    'dynamic_sampling'
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

BACKENDS = ("trl", "openrlhf")
"""Training backends a recipe can name."""

TRL_VERSION = "1.16"
OPENRLHF_VERSION = "0.11.2"


class AlgorithmParams(BaseModel):
    """Tunable parameters shared by every algorithm; unset ones take the algorithm's default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    clip_low: float | None = Field(
        None, gt=0, lt=1, description="Lower clip range ε of the policy ratio (1 - ε)."
    )
    clip_high: float | None = Field(
        None, gt=0, description="Upper clip range ε_high of the policy ratio (1 + ε_high)."
    )
    kl_coef: float | None = Field(
        None, ge=0, description="KL coefficient against the reference model (0: no reference)."
    )
    kl_estimator: Literal["k1", "k2", "k3"] | None = Field(
        None, description="KL estimator (Schulman's k1, k2 or k3)."
    )
    dynamic_sampling: bool | None = Field(
        None, description="Drop prompt groups whose mean score is at the range ends (DAPO)."
    )
    dynamic_sampling_range: tuple[float, float] | None = Field(
        None, description="Keep a group when its mean score lies strictly inside (low, high)."
    )
    overlong_buffer: int | None = Field(
        None,
        ge=0,
        description="DAPO overlong shaping: the last N tokens before max_new_tokens cost a "
        "linearly growing penalty (0: off; unset for DAPO: max_new_tokens // 5).",
    )
    overlong_penalty: float | None = Field(
        None, ge=0, description="Penalty at max_new_tokens of the overlong shaping."
    )


@dataclass(frozen=True)
class Algorithm:
    """One algorithm: defaults, and the options selecting it per backend (or why it cannot)."""

    title: str
    reference: str
    summary: str
    defaults: Mapping[str, Any]
    backends: Mapping[str, Mapping[str, Any] | str]
    notes: Mapping[str, str] = field(default_factory=dict)


_PPO_CLIP = {"clip_low": 0.2, "clip_high": 0.2}
_OFF = {"dynamic_sampling": False, "dynamic_sampling_range": (0.0, 1.0), "overlong_buffer": 0,
        "overlong_penalty": 1.0}  # fmt: skip

ALGORITHMS: dict[str, Algorithm] = {
    "grpo": Algorithm(
        title="GRPO",
        reference="Shao et al. 2024, DeepSeekMath (arXiv 2402.03300)",
        summary="group-normalised advantages (r - mean) / std per prompt; per-sequence mean of "
        "token losses; k3 KL to the reference as a loss term",
        defaults={**_PPO_CLIP, **_OFF, "kl_coef": 0.04, "kl_estimator": "k3"},
        backends={
            "trl": {
                "trainer": "grpo",
                "loss_type": "grpo",
                "scale_rewards": "group",
                "importance_sampling_level": "token",
            },
            "openrlhf": {
                "--algo.advantage.estimator": "group_norm",
                "--algo.kl.use_loss": True,
                "--actor.policy_loss_type": "ppo",
                "--actor.loss_agg_mode": "seq-mean-token-mean",
            },
        },
    ),
    "dapo": Algorithm(
        title="DAPO",
        reference="Yu et al. 2025 (arXiv 2503.14476)",
        summary="GRPO advantages with clip-higher (ε_high 0.28), dynamic sampling, overlong "
        "reward shaping and a token-level loss; no KL",
        defaults={
            "clip_low": 0.2,
            "clip_high": 0.28,
            "kl_coef": 0.0,
            "kl_estimator": "k3",
            "dynamic_sampling": True,
            "dynamic_sampling_range": (0.0, 1.0),
            "overlong_buffer": None,
            "overlong_penalty": 1.0,
        },
        backends={
            "trl": {
                "trainer": "grpo",
                "loss_type": "dapo",
                "scale_rewards": "group",
                "importance_sampling_level": "token",
            },
            "openrlhf": {
                "--algo.advantage.estimator": "group_norm",
                "--algo.kl.use_loss": True,
                "--actor.policy_loss_type": "ppo",
                "--actor.loss_agg_mode": "token-mean",
            },
        },
    ),
    "gspo": Algorithm(
        title="GSPO",
        reference="Zheng et al. 2025 (arXiv 2507.18071)",
        summary="GRPO advantages with a sequence-level importance ratio (length-normalised) and "
        "a narrow clip range (3e-4 / 4e-4); no KL",
        defaults={
            "clip_low": 3e-4,
            "clip_high": 4e-4,
            **_OFF,
            "kl_coef": 0.0,
            "kl_estimator": "k3",
        },
        backends={
            "trl": {
                "trainer": "grpo",
                "loss_type": "grpo",
                "scale_rewards": "group",
                "importance_sampling_level": "sequence",
            },
            "openrlhf": {
                "--algo.advantage.estimator": "group_norm",
                "--algo.kl.use_loss": True,
                "--actor.policy_loss_type": "gspo",
                "--actor.loss_agg_mode": "seq-mean-token-mean",
            },
        },
    ),
    "dr_grpo": Algorithm(
        title="Dr. GRPO",
        reference="Liu et al. 2025, Understanding R1-Zero-Like Training (arXiv 2503.20783)",
        summary="GRPO without the std division and without per-sequence length normalisation; "
        "no KL",
        defaults={**_PPO_CLIP, **_OFF, "kl_coef": 0.0, "kl_estimator": "k3"},
        backends={
            "trl": {
                "trainer": "grpo",
                "loss_type": "dr_grpo",
                "scale_rewards": "none",
                "importance_sampling_level": "token",
            },
            "openrlhf": {
                "--algo.advantage.estimator": "dr_grpo",
                "--algo.kl.use_loss": True,
                "--actor.policy_loss_type": "ppo",
                "--actor.loss_agg_mode": "token-mean",
            },
        },
        notes={
            "openrlhf": "OpenRLHF normalises the summed token losses by the batch's token count "
            "(token-mean), the paper by a constant; both drop the per-sequence length division",
        },
    ),
    "rloo": Algorithm(
        title="RLOO",
        reference="Ahmadian et al. 2024, Back to Basics (arXiv 2402.14740)",
        summary="leave-one-out baseline: each completion's reward minus the mean of the other "
        "completions of its prompt; k1 KL folded into the reward",
        defaults={**_PPO_CLIP, **_OFF, "kl_coef": 0.05, "kl_estimator": "k1"},
        backends={
            "trl": {"trainer": "rloo", "normalize_advantages": False},
            "openrlhf": {
                "--algo.advantage.estimator": "rloo",
                "--actor.policy_loss_type": "ppo",
                "--actor.loss_agg_mode": "token-mean",
            },
        },
        notes={
            "trl": "TRL's RLOOTrainer clips a sequence-level ratio and averages per sequence",
            "openrlhf": "OpenRLHF clips per token and averages over the batch's tokens",
        },
    ),
    "reinforce_pp": Algorithm(
        title="REINFORCE++",
        reference="Hu 2025, REINFORCE++ (arXiv 2501.03262)",
        summary="no per-prompt baseline: rewards with the k1 KL penalty folded in, whitened over "
        "the whole batch; token-level loss",
        defaults={**_PPO_CLIP, **_OFF, "kl_coef": 0.01, "kl_estimator": "k1"},
        backends={
            "trl": "TRL 1.16 has no REINFORCE++: its GRPOTrainer and RLOOTrainer always subtract "
            "a per-prompt baseline; use reinforce_pp_baseline, or backend openrlhf",
            "openrlhf": {
                "--algo.advantage.estimator": "reinforce",
                "--actor.policy_loss_type": "ppo",
                "--actor.loss_agg_mode": "token-mean",
            },
        },
    ),
    "reinforce_pp_baseline": Algorithm(
        title="REINFORCE++-baseline",
        reference="Hu 2025, REINFORCE++ (arXiv 2501.03262)",
        summary="reward minus the prompt's group mean, then normalised by the whole batch's "
        "std; token-level loss; k3 KL as a loss term",
        defaults={**_PPO_CLIP, **_OFF, "kl_coef": 0.001, "kl_estimator": "k3"},
        backends={
            "trl": {
                "trainer": "grpo",
                "loss_type": "dapo",
                "scale_rewards": "batch",
                "importance_sampling_level": "token",
            },
            "openrlhf": {
                "--algo.advantage.estimator": "reinforce_baseline",
                "--algo.kl.use_loss": True,
                "--actor.policy_loss_type": "ppo",
                "--actor.loss_agg_mode": "token-mean",
            },
        },
    ),
}

ALIASES = {
    "dr.grpo": "dr_grpo",
    "drgrpo": "dr_grpo",
    "reinforce++": "reinforce_pp",
    "reinforce_plus_plus": "reinforce_pp",
    "reinforce++-baseline": "reinforce_pp_baseline",
    "reinforce++_baseline": "reinforce_pp_baseline",
}
"""Other spellings of algorithm names (matched case-insensitively, ``-`` read as ``_``)."""

PARAMETER_OPTIONS: dict[str, dict[str, str]] = {
    "trl": {
        "clip_low": "`epsilon`",
        "clip_high": "`epsilon_high`",
        "kl_coef": "`beta`",
        "kl_estimator": "fixed by the trainer: k3 (GRPOTrainer), k1 (RLOOTrainer)",
        "dynamic_sampling": "not available",
        "overlong_buffer": "`soft_punish_cache` of TRL's `get_soft_overlong_punishment`, added to "
        "each task's reward",
        "overlong_penalty": "the multiplier of that penalty",
    },
    "openrlhf": {
        "clip_low": "`--actor.eps_clip_low_high LOW HIGH`",
        "clip_high": "`--actor.eps_clip_low_high LOW HIGH`",
        "kl_coef": "`--algo.kl.init_coef`",
        "kl_estimator": "`--algo.kl.estimator`",
        "dynamic_sampling": "`--algo.dynamic_filtering_enable`, `--algo.dynamic_filtering_range`",
        "overlong_buffer": "`--reward.overlong_buffer_len`",
        "overlong_penalty": "`--reward.overlong_penalty_factor`",
    },
}
"""Where each parameter goes in each backend (also the ``docs/algorithms.md`` table)."""

LIMITS: dict[tuple[str, str], dict[str, tuple[tuple[Any, ...], str]]] = {
    ("trl", "grpo"): {
        "kl_estimator": (("k3",), "TRL's GRPOTrainer computes the KL term with k3 only"),
        "dynamic_sampling": ((False,), "TRL 1.16's GRPOTrainer has no dynamic sampling"),
    },
    ("trl", "rloo"): {
        "kl_estimator": (("k1",), "TRL's RLOOTrainer folds a k1 KL into the reward"),
        "dynamic_sampling": ((False,), "TRL 1.16's RLOOTrainer has no dynamic sampling"),
    },
}
"""(backend, trainer) -> parameter -> (the values it can do, why)."""


@dataclass(frozen=True)
class ParamProblem:
    """Something a backend cannot do: ``param`` is None when the whole algorithm is refused."""

    backend: str
    param: str | None
    message: str


def canonical_algorithm(name: str) -> str | None:
    """The table's name for ``name`` (aliases, any case), or None if unknown.

    Example:
        >>> canonical_algorithm("REINFORCE++-baseline"), canonical_algorithm("Dr.GRPO")
        ('reinforce_pp_baseline', 'dr_grpo')
        >>> canonical_algorithm("ppo") is None
        True
    """
    key = name.strip().lower()
    if key in ALGORITHMS:
        return key
    key = ALIASES.get(key, key.replace("-", "_"))
    return key if key in ALGORITHMS else None


def unknown_algorithm_message(name: str) -> str:
    """The error for an unknown algorithm name, with "did you mean" and the valid names.

    Example:
        >>> unknown_algorithm_message("grop")  # doctest: +ELLIPSIS
        "unknown algorithm 'grop'; did you mean 'grpo'? (valid: grpo, dapo, ...)"
    """
    close = difflib.get_close_matches(name.lower(), list(ALGORITHMS), n=2, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return f"unknown algorithm {name!r}{hint} (valid: {', '.join(ALGORITHMS)})"


def resolve_params(
    name: str, params: AlgorithmParams | Mapping[str, Any], *, max_new_tokens: int
) -> dict[str, Any]:
    """The algorithm's defaults with the recipe's ``params`` on top, every value filled in.

    DAPO's unset ``overlong_buffer`` becomes ``max_new_tokens // 5`` (the paper's 4096 of
    20480). Nothing is checked here: :func:`param_problems` does that.

    Example:
        >>> resolve_params("dapo", {}, max_new_tokens=512)["overlong_buffer"]
        102
        >>> resolve_params("grpo", {"kl_coef": 0.0}, max_new_tokens=64)["kl_coef"]
        0.0
    """
    algorithm = ALGORITHMS[canonical_algorithm(name) or name]
    given = params.model_dump(exclude_none=True) if isinstance(params, BaseModel) else dict(params)
    resolved = {**algorithm.defaults, **given}
    if resolved["overlong_buffer"] is None:
        resolved["overlong_buffer"] = max_new_tokens // 5
    resolved["dynamic_sampling_range"] = tuple(resolved["dynamic_sampling_range"])
    return resolved


def param_problems(resolved: Mapping[str, Any], *, max_new_tokens: int) -> list[tuple[str, str]]:
    """``(param, message)`` for each inconsistency between resolved parameters.

    Example:
        >>> param_problems({"clip_low": 0.3, "clip_high": 0.2, "dynamic_sampling_range": (0, 1),
        ...                 "overlong_buffer": 0}, max_new_tokens=8)
        [('clip_high', 'clip_high 0.2 is below clip_low 0.3')]
    """
    problems = []
    if resolved["clip_high"] < resolved["clip_low"]:
        upper, lower = resolved["clip_high"], resolved["clip_low"]
        problems.append(("clip_high", f"clip_high {upper:g} is below clip_low {lower:g}"))
    low, high = resolved["dynamic_sampling_range"]
    if not 0.0 <= low < high <= 1.0:
        problems.append((
            "dynamic_sampling_range", f"({low:g}, {high:g}) must satisfy 0 <= low < high <= 1"
        ))  # fmt: skip
    if resolved["overlong_buffer"] >= max_new_tokens:
        buffer = resolved["overlong_buffer"]
        limit = f"rollout.max_new_tokens ({max_new_tokens})"
        problems.append(("overlong_buffer", f"{buffer} must be below {limit}"))
    return problems


def backend_options(
    name: str, resolved: Mapping[str, Any], backend: str
) -> tuple[dict[str, Any], list[ParamProblem]]:
    """The options selecting algorithm ``name`` with ``resolved`` parameters in ``backend``.

    For ``trl``: ``trainer`` (``grpo`` | ``rloo``) and ``GRPOConfig`` / ``RLOOConfig`` fields,
    plus ``overlong_reward`` (``soft_punish_cache`` and ``weight``) when shaping is on. For
    ``openrlhf``: dotted flags to values (``True`` for a switch, a list for two values).
    Everything the backend cannot do comes back as a :class:`ParamProblem`.

    Example:
        >>> params = resolve_params("gspo", {}, max_new_tokens=64)
        >>> options, _ = backend_options("gspo", params, "openrlhf")
        >>> options["--actor.policy_loss_type"], options["--actor.eps_clip_low_high"]
        ('gspo', [0.0003, 0.0004])
    """
    algorithm = ALGORITHMS[canonical_algorithm(name) or name]
    row = algorithm.backends[backend]
    if isinstance(row, str):
        return {}, [ParamProblem(backend, None, f"backend {backend!r} cannot run {name}: {row}")]
    options = dict(row)
    problems = []
    limits = LIMITS.get((backend, str(row.get("trainer", ""))), {})
    for param, (allowed, why) in limits.items():
        value = resolved[param]
        if param == "kl_estimator" and resolved["kl_coef"] == 0:
            continue  # no KL term: the estimator does not matter
        if value not in allowed:
            shown = "true" if value is True else value
            fix = ", ".join("false" if a is False else str(a) for a in allowed)
            problems.append(ParamProblem(
                backend, param,
                f"backend {backend!r} cannot do {param} {shown} for {name}: {why}; "
                f"set algorithm.params.{param}: {fix}"
                + (", or use backend openrlhf" if backend == "trl" else ""),
            ))  # fmt: skip
    if backend == "trl":
        options |= {"epsilon": resolved["clip_low"], "epsilon_high": resolved["clip_high"],
                    "beta": resolved["kl_coef"]}  # fmt: skip
        if resolved["overlong_buffer"]:
            options["overlong_reward"] = {
                "soft_punish_cache": resolved["overlong_buffer"],
                "weight": resolved["overlong_penalty"],
            }
    else:
        options |= {
            "--actor.eps_clip_low_high": [resolved["clip_low"], resolved["clip_high"]],
            "--algo.kl.init_coef": resolved["kl_coef"],
            "--algo.kl.estimator": resolved["kl_estimator"],
        }
        if resolved["dynamic_sampling"]:
            options["--algo.dynamic_filtering_enable"] = True
            options["--algo.dynamic_filtering_range"] = list(resolved["dynamic_sampling_range"])
        if resolved["overlong_buffer"]:
            options["--reward.overlong_buffer_len"] = resolved["overlong_buffer"]
            options["--reward.overlong_penalty_factor"] = resolved["overlong_penalty"]
    return options, problems


def _cell(value: Mapping[str, Any] | str) -> str:
    if isinstance(value, str):
        return f"**refused**: {value}"
    parts = []
    for key, item in value.items():
        if item is True:
            parts.append(f"`{key}`")
        elif key.startswith("--"):
            parts.append(f"`{key} {item}`")
        else:
            parts.append(f"`{key}={item!r}`")
    return ", ".join(parts)


def _defaults_cell(defaults: Mapping[str, Any]) -> str:
    shown = {k: v for k, v in defaults.items() if not (k.startswith("dynamic") and v is False)}
    if not defaults["dynamic_sampling"]:
        shown.pop("dynamic_sampling_range", None)
    if defaults["overlong_buffer"] == 0:
        shown.pop("overlong_penalty", None)
    if shown.get("overlong_buffer", 0) is None:
        shown["overlong_buffer"] = "max_new_tokens // 5"
    return ", ".join(f"{k}={v}" for k, v in shown.items())


def markdown_table() -> str:
    """The algorithm table of ``docs/algorithms.md`` (one row per algorithm and backend).

    Example:
        >>> markdown_table().splitlines()[0]
        '| algorithm | defaults | TRL 1.16 | OpenRLHF 0.11.2 |'
    """
    lines = [
        f"| algorithm | defaults | TRL {TRL_VERSION} | OpenRLHF {OPENRLHF_VERSION} |",
        "|---|---|---|---|",
    ]
    for name, algorithm in ALGORITHMS.items():
        cells = []
        for backend in BACKENDS:
            cell = _cell(algorithm.backends[backend])
            if backend in algorithm.notes:
                cell += f" ({algorithm.notes[backend]})"
            cells.append(cell)
        title = f"`{name}` ({algorithm.title})"
        lines.append(f"| {title} | {_defaults_cell(algorithm.defaults)} | {' | '.join(cells)} |")
    lines += ["", "| parameter | TRL | OpenRLHF |", "|---|---|---|"]
    for param in AlgorithmParams.model_fields:
        if param == "dynamic_sampling_range":
            continue
        options = [PARAMETER_OPTIONS[backend][param] for backend in BACKENDS]
        lines.append(f"| `{param}` | {' | '.join(options)} |")
    return "\n".join(lines) + "\n"
