"""The flags of OpenRLHF 0.11.2's ``train_ppo_ray`` parser, and how that parser reads a key.

``openrlhf.extra_args`` is a mapping of flags to values that the bundle appends to the argv
(:func:`~videorl_kit.adapters.openrlhf.argv.to_argv`). OpenRLHF reads that argv with
:mod:`argparse`, which also accepts ``--flag=value`` and any unique prefix of a flag
(``allow_abbrev``), and reads a value that starts with ``-`` as a flag of its own. So a key
such as ``--train.agent_func_pat`` or ``--train.agent_func_path=/tmp/x.py``, or a value such
as ``"--train.agent_func_path"``, would set a flag the recipe already sets. The kit refuses
every key that is not the full spelling of one of :data:`OPENRLHF_FLAGS` (saying which flag
OpenRLHF would read it as), and every value that does not fit the flag's arity or that
OpenRLHF would read as a flag (:func:`value_problem`).

:data:`OPENRLHF_FLAGS` is a fact table of the installed OpenRLHF's parser (its long option
strings and the number of values each takes); the OpenRLHF adapter's tests build the real
parser and prove that the table and :func:`read_key` agree with it.

Example:
    >>> read_key("--train.agent_func_pat")
    KeyReading(key='--train.agent_func_pat', flags=('--train.agent_func_path',), value=None)
    >>> read_key("--ds.param_dtype=bf16").flags, read_key("--ds.param_dtype=bf16").value
    (('--ds.param_dtype',), 'bf16')
    >>> print(key_problem("--ds.packing_sample"))  # doctest: +NORMALIZE_WHITESPACE
    OpenRLHF 0.11.2 reads '--ds.packing_sample' as --ds.packing_samples (argparse accepts a
    unique prefix of a flag); the kit takes only the full flag as its own key, with its value
    apart (--ds.packing_samples: VALUE)
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from videorl_kit.adapters.openrlhf.argv import to_argv
from videorl_kit.core.safe_text import control_characters, quoted

OPENRLHF_VERSION = "0.11.2"

OPENRLHF_FLAGS: dict[str, int | str] = {
    "--actor.adam.betas": 2,
    "--actor.adam.eps": 1,
    "--actor.adam.lr": 1,
    "--actor.adam.weight_decay": 1,
    "--actor.aux_loss_coef": 1,
    "--actor.dual_clip": 1,
    "--actor.entropy_coef": 1,
    "--actor.eps_clip": 1,
    "--actor.eps_clip_low_high": 2,
    "--actor.freeze_visual_encoder": 0,
    "--actor.gradient_checkpointing_enable": 0,
    "--actor.gradient_checkpointing_reentrant": 0,
    "--actor.loss_agg_mode": 1,
    "--actor.lr_scheduler": 1,
    "--actor.lr_warmup_ratio": 1,
    "--actor.max_norm": 1,
    "--actor.min_lr_ratio": 1,
    "--actor.model_name_or_path": 1,
    "--actor.muon.lr": 1,
    "--actor.muon.momentum": 1,
    "--actor.muon.nesterov": 0,
    "--actor.muon.no_nesterov": 0,
    "--actor.muon.ns_steps": 1,
    "--actor.num_gpus_per_node": 1,
    "--actor.num_nodes": 1,
    "--actor.optim": 1,
    "--actor.policy_loss_type": 1,
    "--algo.advantage.estimator": 1,
    "--algo.advantage.gamma": 1,
    "--algo.advantage.is_correction_gating": 1,
    "--algo.advantage.is_correction_level": 1,
    "--algo.advantage.is_correction_mode": 1,
    "--algo.advantage.is_correction_threshold": "+",
    "--algo.advantage.lambd": 1,
    "--algo.advantage.no_std_norm": 0,
    "--algo.dynamic_filtering_enable": 0,
    "--algo.dynamic_filtering_range": 2,
    "--algo.kl.estimator": 1,
    "--algo.kl.horizon": 1,
    "--algo.kl.init_coef": 1,
    "--algo.kl.target": 1,
    "--algo.kl.unbiased_gradient": 0,
    "--algo.kl.use_loss": 0,
    "--ckpt.best_metric_key": 1,
    "--ckpt.disable_ds": 0,
    "--ckpt.load_enable": 0,
    "--ckpt.max_mem": 1,
    "--ckpt.max_num": 1,
    "--ckpt.output_dir": 1,
    "--ckpt.path": 1,
    "--ckpt.save_hf": 0,
    "--ckpt.save_steps": 1,
    "--critic.adam.betas": 2,
    "--critic.adam.eps": 1,
    "--critic.adam.lr": 1,
    "--critic.adam.weight_decay": 1,
    "--critic.freezing_steps": 1,
    "--critic.lr_scheduler": 1,
    "--critic.lr_warmup_ratio": 1,
    "--critic.max_norm": 1,
    "--critic.min_lr_ratio": 1,
    "--critic.model_name_or_path": 1,
    "--critic.muon.lr": 1,
    "--critic.muon.momentum": 1,
    "--critic.muon.nesterov": 0,
    "--critic.muon.no_nesterov": 0,
    "--critic.muon.ns_steps": 1,
    "--critic.num_gpus_per_node": 1,
    "--critic.num_nodes": 1,
    "--critic.optim": 1,
    "--critic.save_value_network": 0,
    "--critic.value_clip": 1,
    "--data.apply_chat_template": 0,
    "--data.dataloader_num_workers": 1,
    "--data.disable_fast_tokenizer": 0,
    "--data.image_key": 1,
    "--data.input_key": 1,
    "--data.input_template": 1,
    "--data.label_key": 1,
    "--data.max_images_per_prompt": 1,
    "--data.max_len": 1,
    "--data.max_samples": 1,
    "--data.prompt_dataset": 1,
    "--data.prompt_probs": 1,
    "--data.prompt_split": 1,
    "--ds.adam_offload": 0,
    "--ds.attn_implementation": 1,
    "--ds.deepcompile": 0,
    "--ds.enable_sleep": 0,
    "--ds.experts_implementation": 1,
    "--ds.grad_accum_dtype": 1,
    "--ds.load_in_4bit": 0,
    "--ds.lora.alpha": 1,
    "--ds.lora.dropout": 1,
    "--ds.lora.rank": 1,
    "--ds.lora.target_modules": "*",
    "--ds.overlap_comm": 0,
    "--ds.packing_samples": 0,
    "--ds.param_dtype": 1,
    "--ds.ring_attn_head_stride": 1,
    "--ds.ring_attn_size": 1,
    "--ds.tensor_parallel_size": 1,
    "--ds.use_liger_kernel": 0,
    "--ds.use_universal_ckpt": 0,
    "--ds.value_head_prefix": 1,
    "--ds.zero_stage": 1,
    "--ds.zpg": 1,
    "--eval.dataset": 1,
    "--eval.n_samples_per_prompt": 1,
    "--eval.split": 1,
    "--eval.steps": 1,
    "--eval.temperature": 1,
    "--local_rank": 1,
    "--use_ms": 0,
    "--logger.logging_steps": 1,
    "--logger.tensorboard_dir": 1,
    "--logger.wandb.group": 1,
    "--logger.wandb.key": 1,
    "--logger.wandb.org": 1,
    "--logger.wandb.project": 1,
    "--logger.wandb.run_name": 1,
    "--ref.num_gpus_per_node": 1,
    "--ref.num_nodes": 1,
    "--ref.offload": 0,
    "--reward.clip_range": 2,
    "--reward.model_name_or_path": 1,
    "--reward.normalize_enable": 0,
    "--reward.num_gpus_per_node": 1,
    "--reward.num_nodes": 1,
    "--reward.offload": 0,
    "--reward.overlong_buffer_len": 1,
    "--reward.overlong_penalty_factor": 1,
    "--reward.remote_url": 1,
    "--reward.stop_properly_penalty_coef": 1,
    "--rollout.batch_size": 1,
    "--rollout.max_new_tokens": 1,
    "--rollout.max_tokens_per_gpu": 1,
    "--rollout.micro_batch_size": 1,
    "--rollout.n_samples_per_prompt": 1,
    "--rollout.temperature": 1,
    "--rollout.top_p": 1,
    "--rollout.vllm_generate_batch_size": 1,
    "--train.agent_func_path": 1,
    "--train.async_enable": 0,
    "--train.async_queue_size": 1,
    "--train.batch_size": 1,
    "--train.colocate_actor_ref": 0,
    "--train.colocate_all": 0,
    "--train.colocate_critic_reward": 0,
    "--train.dynamic_batch_enable": 0,
    "--train.ema_beta": 1,
    "--train.enable_ema": 0,
    "--train.full_determinism_enable": 0,
    "--train.max_epochs": 1,
    "--train.max_tokens_per_gpu": 1,
    "--train.micro_batch_size": 1,
    "--train.num_episodes": 1,
    "--train.partial_rollout_enable": 0,
    "--train.seed": 1,
    "--vllm.enable_prefix_caching": 0,
    "--vllm.enable_sleep": 0,
    "--vllm.enforce_eager": 0,
    "--vllm.gpu_memory_utilization": 1,
    "--vllm.num_engines": 1,
    "--vllm.sync_backend": 1,
    "--vllm.sync_with_ray": 0,
    "--vllm.tensor_parallel_size": 1,
}
"""Every option string of OpenRLHF 0.11.2's ``openrlhf/cli/train_ppo_ray.py`` parser (but
``--help``), with the values it takes: ``0`` a switch, ``1`` one value, ``2`` two values,
``"+"`` one or more, ``"*"`` any number."""

_PARSER_ONLY = ("--help",)
"""Option strings of the parser that no run may pass (``--help`` prints and exits)."""

_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
"""What argparse (Python 3.11) reads as a negative number, not a flag, when the parser has
no option that looks like one (OpenRLHF's has none)."""


@dataclass(frozen=True)
class KeyReading:
    """How OpenRLHF's parser reads an argv word ``key`` that starts with ``--``: the flags it
    could mean (one: that flag; several: argparse refuses it as ambiguous; none: unknown)
    and the value written after ``=`` in it (None without ``=``)."""

    key: str
    flags: tuple[str, ...]
    value: str | None


def read_key(key: str) -> KeyReading:
    """Read ``key`` (starting with ``--``) as Python 3.11's argparse reads it in OpenRLHF's
    parser: the exact flag; else the part before ``=``, exactly; else every flag that part
    is a prefix of (``allow_abbrev``).

    Example:
        >>> read_key("--ds.param_dtype").flags
        ('--ds.param_dtype',)
        >>> len(read_key("--ds.p").flags) > 1, read_key("--no.such").flags
        (True, ())
    """
    known = (*OPENRLHF_FLAGS, *_PARSER_ONLY)
    if key in known:
        return KeyReading(key, (key,), None)
    prefix, equals, value = key.partition("=")
    explicit = value if equals else None
    if equals and prefix in known:
        return KeyReading(key, (prefix,), explicit)
    return KeyReading(key, tuple(flag for flag in known if flag.startswith(prefix)), explicit)


def key_problem(key: str) -> str | None:
    """Why ``key`` of ``openrlhf.extra_args`` is not the full spelling of one OpenRLHF
    0.11.2 flag, or None. Each answer is one line that says what OpenRLHF would read.

    Example:
        >>> key_problem("--ds.param_dtype") is None
        True
        >>> print(key_problem("--train.agent_func_path=/tmp/x.py"))
        OpenRLHF 0.11.2 reads '--train.agent_func_path=/tmp/x.py' as --train.agent_func_path
        with the value '/tmp/x.py'; the kit takes only the full flag as its own key, with its
        value apart (--train.agent_func_path: VALUE)
    """
    bad = control_characters(key)
    if bad or any(ch.isspace() for ch in key):
        what = f"a control character ({', '.join(dict.fromkeys(bad))})" if bad else "whitespace"
        return (
            f"the key {quoted(key)} holds {what}; write one flag per key (its value apart), "
            "e.g. --ds.param_dtype: bf16"
        )
    if not key.startswith("--") or key == "--":
        return f"{quoted(key)} is not a flag: OpenRLHF {OPENRLHF_VERSION} flags start with --"
    reading = read_key(key)
    if reading.flags == (key,) and key not in _PARSER_ONLY:
        return None
    if len(reading.flags) > 1:
        shown = ", ".join(reading.flags[:4]) + (", …" if len(reading.flags) > 4 else "")
        return (
            f"{quoted(key)} is not a flag: OpenRLHF {OPENRLHF_VERSION} would refuse it as an "
            f"abbreviation of several ({shown}); write the full flag as its own key"
        )
    if not reading.flags:
        near = difflib.get_close_matches(key.partition("=")[0], OPENRLHF_FLAGS, n=1)
        hint = f"; did you mean {near[0]}?" if near else ""
        return (
            f"{quoted(key)} is not an OpenRLHF {OPENRLHF_VERSION} flag (its "
            f"openrlhf/cli/train_ppo_ray.py has no such option){hint}"
        )
    flag = reading.flags[0]
    if flag in _PARSER_ONLY:
        return (
            f"OpenRLHF {OPENRLHF_VERSION} reads {quoted(key)} as {flag}, which prints its usage "
            "and exits: a run cannot pass it"
        )
    how = f"with the value {quoted(reading.value)}" if reading.value is not None else ""
    how = how or "(argparse accepts a unique prefix of a flag)"
    return (
        f"OpenRLHF {OPENRLHF_VERSION} reads {quoted(key)} as {flag} {how}; the kit takes only "
        f"the full flag as its own key, with its value apart ({flag}: VALUE)"
    )


def _words(value: Any) -> list[str]:
    return to_argv({"--x": value})[1:]


def value_problem(flag: str, value: Any) -> str | None:
    """Why ``value`` cannot follow ``flag`` (a key :func:`key_problem` accepts) in OpenRLHF's
    argv, or None: a switch takes true or false; a flag with values takes a number or text
    (``null``/``false``: left out), a list only where it takes several; and no value may start
    with ``-`` unless it is a plain negative number (OpenRLHF's parser would read it as a flag
    of its own: ``--vllm.enforce_eager: "--train.agent_func_path=x"`` sets that flag).

    Example:
        >>> value_problem("--ds.param_dtype", "bf16") is None
        True
        >>> value_problem("--vllm.enforce_eager", "--train.agent_func_path")
        '--vllm.enforce_eager is a switch: its value is true or false'
        >>> print(value_problem("--ds.param_dtype", "--train.seed"))
        the value '--train.seed' starts with '-': OpenRLHF's parser would read it as a flag
        (only plain negative numbers such as -1 or -0.5 are values)
    """
    arity = OPENRLHF_FLAGS.get(flag, 1)
    if value is None or value is False:
        return None
    if arity == 0:
        return None if value is True else f"{flag} is a switch: its value is true or false"
    if value is True:
        return f"{flag} takes a value: true and false are only for switches"
    items = list(value) if isinstance(value, list | tuple) else [value]
    if isinstance(value, list | tuple) and arity == 1:
        return f"{flag} takes one value, not a list"
    if arity == 2 and len(items) != 2:
        return f"{flag} takes two values: write a list of two"
    if arity == "+" and not items:
        return f"{flag} takes at least one value"
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            return f"{flag} takes numbers or text, not {quoted(item)}"
    for word in _words(value):
        if word.startswith("-") and not _NEGATIVE_NUMBER.match(word):
            return (
                f"the value {quoted(word)} starts with '-': OpenRLHF's parser would read it as "
                "a flag (only plain negative numbers such as -1 or -0.5 are values)"
            )
    return None
