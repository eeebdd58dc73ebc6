"""Mixed offline/online GRPO groups on TRL: the kit's trainer subclass fills k of n members of a
group with stored responses (a recipe's ``offline:`` section).

:func:`offline_trainer_class` puts :class:`OfflineMixing` in front of the kit's
``GRPOTrainer`` subclass (:func:`~videorl_kit.adapters.trl.config.trainer_class`); the mixin
overrides three methods of TRL 1.16's trainer and touches nothing else of its loss:

``_generate_and_score_completions``
    notes the batch's rows (task, sample, gold) for the two methods below, lets TRL generate,
    score and normalise as usual, then logs the offline metrics and, for
    ``correction: truncated_is``, scales the offline members' per-token advantages by the
    truncated importance weight (TRL's loss accepts (B, T) advantages from subclasses);
``_generate``
    decides each group's members. TRL's sampler puts a prompt's ``n`` rows next to each other
    (on one process or split over several, in order), so row ``r`` of process ``p`` is member
    ``(p·L + r) mod n`` of group ``(p·L + r) div n``; the last ``k`` members are the offline
    slots, filled with up to ``k`` candidates of the group's sample (:class:`~videorl_kit.train.
    offline.select.OfflinePool`; ``random`` draws are keyed by seed, step and group, so a resumed
    run draws the same). ``when: always`` generates only the other rows (``n - k`` per group
    with candidates, not ``n``); ``when: below_accuracy`` generates all ``n``, scores their
    accuracy with the task's verifier, and replaces the slots of groups whose online mean
    accuracy is below the threshold: it pays for ``n`` generations and one extra verifier pass
    per completion, and throws the replaced generations away (the ``offline/generated``
    metric counts what was generated);
``_calculate_rewards``
    keeps TRL's per-function rewards for the metrics (the offline member is scored by the same
    reward functions and normalised with its group by TRL itself).

An offline member is tokenized as a rollout (:func:`~videorl_kit.train.offline.tokens.
rollout_tokens`: the model's end-of-turn token appended, cut to ``max_completion_length`` with
the cut recorded); its prompt ids and images are those of the group's prompt, so the forward
passes see exactly what an online member of the group would.

Metrics per step and task (``offline/<task>/...``): ``groups``, ``candidates`` (groups whose
sample has a candidate), ``mixed`` (groups that received an offline member), ``reward`` and
``advantage`` (means over offline members), ``online_accuracy`` (the online members' mean
accuracy before mixing), ``truncated`` (share of offline members cut at the length limit), and
for ``truncated_is`` ``is_weight`` (mean weight over offline tokens). ``offline/generated`` is the
number of completions generated in the step. With several processes, metrics are process 0's.

Example:
    >>> from videorl_kit.adapters.trl.config import trainer_class
    >>> cls = offline_trainer_class(trainer_class("grpo"))
    >>> cls.__name__, cls.__mro__[1].__name__
    ('GRPOTrainer', 'OfflineMixing')
"""

from __future__ import annotations

import contextlib
import copy
import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from videorl_kit.adapters.trl.native_video import INPUTS_KEY
from videorl_kit.core.errors import UserError
from videorl_kit.rewards.task import TaskReward
from videorl_kit.rewards.trl_functions import completion_text
from videorl_kit.train.offline.section import OfflineSection
from videorl_kit.train.offline.select import Candidate, OfflinePool, load_pool
from videorl_kit.train.offline.tokens import RolloutTokens, end_of_turn_id, rollout_tokens
from videorl_kit.train.plan import TrainPlan

NOT_FORWARD_INPUTS = frozenset({
    "prompt_ids", "prompt_mask", "completion_ids", "completion_mask", "advantages",
    "num_items_in_batch", "old_per_token_logps", "importance_sampling_ratio",
    "sampling_per_token_logps", "ref_per_token_logps", "tool_mask", INPUTS_KEY,
})  # fmt: skip
"""Keys of a TRL batch that are not forward inputs of the log-prob pass (every other key,
images and video tensors included, is passed to ``_get_per_token_logps_and_entropies``; native
video's per-row inputs reach it through :meth:`OfflineMixing._native_forward_inputs`)."""


def run_tokenizer_ids(plan: TrainPlan) -> frozenset[str]:
    """The names the run's tokenizer goes by in a trajectory's ``tokenizer_id``.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> from videorl_kit.train.plan import ModelSource
        >>> plan = NS(model=ModelSource("tiny", "qwen2.5-vl"), model_name_or_path="/r/base-model")
        >>> sorted(run_tokenizer_ids(plan))
        ['/r/base-model', 'tiny:qwen2.5-vl']
    """
    names = {plan.model.describe(), plan.model_name_or_path}
    if plan.model.kind == "local":
        names.add(str(Path(plan.model.name).resolve()))
    if plan.model.kind == "hub":
        names.add(plan.model.name)
    return frozenset(names)


@dataclass
class OfflineRun:
    """What a run mixes in: the section, the pool, each task's reward, the seed."""

    section: OfflineSection
    pool: OfflinePool
    rewards: dict[str, TaskReward]
    seed: int
    tokenizer_ids: frozenset[str]

    @classmethod
    def from_plan(cls, plan: TrainPlan) -> OfflineRun:
        """The run's offline pool, read from its store (``plan.recipe.offline`` must be set)."""
        section = plan.recipe.offline
        assert section is not None
        specs = [entry.spec for entry in plan.loaded.tasks]
        pool = load_pool(plan.store, section, [spec.id for spec in specs])
        rewards = {spec.id: TaskReward.from_spec(spec) for spec in specs}
        return cls(section, pool, rewards, plan.recipe.seed, run_tokenizer_ids(plan))

    def describe(self) -> list[str]:
        """The pool's coverage per task, one line each (``train --dry-run`` shows them)."""
        return [row.describe(self.section.per_group) for row in self.pool.coverage()]

    def accuracy(self, row: dict[str, Any], completion: Any) -> float:
        """The verifier's accuracy of one completion (NaN when the verdict is masked)."""
        result = self.rewards[row["task_id"]].score(
            completion_text(completion), row["answer"], row.get("options"), row.get("problem_type")
        )
        return result.accuracy if result.status == "ok" else math.nan

    def tokens(self, tokenizer: Any, candidate: Candidate, limit: int, end: int) -> RolloutTokens:
        """A candidate as rollout tokens; its stored ids (and log-probs) are used when they were
        made with the run's tokenizer."""
        own = candidate.token_ids is not None and candidate.tokenizer_id in self.tokenizer_ids
        return rollout_tokens(
            tokenizer, candidate.response, limit, end_id=end,
            stored_ids=candidate.token_ids if own else None,
            stored_logprobs=candidate.behaviour_logprobs if own else None,
        )  # fmt: skip


def offline_problems(recipe: Any, options: dict[str, Any]) -> list[tuple[str, str]]:
    """``(field path, message)`` for an ``offline:`` section TRL cannot train (``options``: the
    algorithm's TRL options): the offline members join ``GRPOTrainer``'s groups only, so an
    algorithm trained by TRL's ``RLOOTrainer`` is refused. Empty without the section.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> recipe = NS(offline=NS(correction="none"), algorithm=NS(name="rloo"))
        >>> [(path, message)] = offline_problems(recipe, {"trainer": "rloo"})
        >>> path, message[:52]
        ('offline', "backend trl mixes offline members into GRPOTrainer's")
        >>> offline_problems(recipe, {"trainer": "grpo"})
        []
    """
    if recipe.offline is None or options.get("trainer", "grpo") == "grpo":
        return []
    return [
        (
            "offline",
            f"backend trl mixes offline members into GRPOTrainer's "
            f"groups; algorithm {recipe.algorithm.name} trains with TRL's "
            f"{str(options.get('trainer')).upper()}Trainer, which has no such "
            "path; choose a GRPO-family algorithm or backend openrlhf",
        )
    ]


def check_offline_tokens(plan: TrainPlan) -> None:
    """For ``truncated_is``: refuse trajectories whose token ids (and so log-probs) were made
    with another tokenizer than the run's, naming how many.

    Raises :class:`~videorl_kit.core.errors.UserError`.
    """
    section = plan.recipe.offline
    if section is None or section.correction != "truncated_is":
        return
    run = OfflineRun.from_plan(plan)
    usable = [c for key in run.pool.by_sample for c in run.pool.usable(*key)]
    foreign = sorted({c.tokenizer_id or "none" for c in usable
                      if c.tokenizer_id not in run.tokenizer_ids})  # fmt: skip
    if foreign:
        count = sum(c.tokenizer_id not in run.tokenizer_ids for c in usable)
        raise UserError(
            f"{plan.loaded.path}: offline.correction truncated_is: {count} of the {len(usable)} "
            f"trajectories this run can use were tokenized with {', '.join(foreign)}, not the "
            f"model's tokenizer ({plan.model.describe()}); their log-probs do not apply to its "
            "tokens: narrow offline.source or choose recompute"
        )


@dataclass
class _Offline:
    """One offline member of the local batch."""

    candidate: Candidate
    tokens: RolloutTokens


@dataclass
class _Batch:
    """What the mixin decided and saw for one generation batch."""

    inputs: list[dict[str, Any]]
    step: int
    members: dict[int, _Offline] = field(default_factory=dict)
    group_of: list[int] = field(default_factory=list)
    candidates: dict[int, bool] = field(default_factory=dict)
    group_accuracy: dict[int, float] = field(default_factory=dict)
    generated: int = 0
    rewards_per_func: Any = None


def _mean(values: Sequence[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return sum(finite) / len(finite) if finite else math.nan


class OfflineMixing:
    """The offline-mixing methods of the kit's GRPO trainer (see the module doc)."""

    _offline_run: OfflineRun | None = None
    _offline_batch: _Batch | None = None

    def use_offline(self, run: OfflineRun) -> None:
        """Mix ``run``'s trajectories into the training groups from now on."""
        self._offline_run = run

    @functools.cached_property
    def _offline_end_id(self) -> int:
        return end_of_turn_id(self.processing_class)

    # -- TRL's methods ---------------------------------------------------------------------
    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        if self._offline_run is None or not self.model.training:
            return super()._generate_and_score_completions(inputs)
        self._offline_batch = _Batch(inputs=inputs, step=int(self.state.global_step))
        try:
            output = super()._generate_and_score_completions(inputs)
            return self._offline_finish(output, self._offline_batch)
        finally:
            self._offline_batch = None

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):  # type: ignore[no-untyped-def]
        rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        if self._offline_batch is not None:
            self._offline_batch.rewards_per_func = rewards
        return rewards

    def _generate(self, prompts: list[Any]):  # type: ignore[no-untyped-def]
        batch, run = self._offline_batch, self._offline_run
        if batch is None or run is None:
            return super()._generate(prompts)
        section, n = run.section, self.num_generations
        k, start = section.per_group, self.accelerator.process_index * len(prompts)
        planned: dict[int, Candidate] = {}
        for row, example in enumerate(batch.inputs):
            group, member = divmod(start + row, n)
            batch.group_of.append(group)
            has = run.pool.has(example["task_id"], example["sample_id"])
            batch.candidates[group] = has
            slot = member - (n - k)
            if has and slot >= 0:
                draw = f"{run.seed}:{batch.step}:{group}"
                chosen = run.pool.choose(example["task_id"], example["sample_id"], k, draw)
                if slot < len(chosen):
                    planned[row] = chosen[slot]
        always = section.when == "always"
        online = [r for r in range(len(prompts)) if not (always and r in planned)]
        with self._native_rows(online):
            result = list(super()._generate([prompts[r] for r in online]))
        batch.generated = len(online)
        completions = dict(zip(online, result[3], strict=True))
        accuracy = [
            run.accuracy(batch.inputs[r], completions[r]) if r in completions else math.nan
            for r in range(len(prompts))
        ]
        batch.group_accuracy = self._group_accuracy(batch.group_of, accuracy, n)
        if not always:
            threshold = section.accuracy_threshold
            assert threshold is not None
            planned = {
                r: c
                for r, c in planned.items()
                if batch.group_accuracy[batch.group_of[r]] < threshold
            }  # nan (every verdict masked) is not below the threshold
        tokenizer = self.processing_class
        for row, candidate in planned.items():
            tokens = run.tokens(
                tokenizer, candidate, self.max_completion_length, self._offline_end_id
            )
            batch.members[row] = _Offline(candidate, tokens)
        return self._offline_splice(prompts, online, result, batch)

    # -- helpers -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def _native_forward_inputs(self, samples: list[Any] | None) -> Iterator[None]:
        """With native video, the batch's per-row inputs for a log-prob forward run here."""
        if samples is None:
            yield
            return
        saved = getattr(self, "_native_forward", None)
        self._native_forward = samples
        try:
            yield
        finally:
            self._native_forward = saved

    @contextlib.contextmanager
    def _native_rows(self, rows: list[int]) -> Iterator[None]:
        """With native video (:class:`~videorl_kit.adapters.trl.native_video.NativeVideoMixin`),
        its per-row generation inputs narrowed to ``rows`` while TRL sees only those prompts."""
        samples = getattr(self, "_native_generation", None)
        if samples is None:
            yield
            return
        self._native_generation = [samples[r] for r in rows]
        try:
            yield
        finally:
            self._native_generation = samples

    def _group_accuracy(
        self, group_of: list[int], accuracy: list[float], n: int
    ) -> dict[int, float]:
        """Mean online accuracy of each local group, over every process's members."""
        import torch

        local = torch.tensor(accuracy, dtype=torch.float32, device=self.accelerator.device)
        everything = self.accelerator.gather(local).view(-1, n)
        means = torch.nanmean(everything, dim=1).tolist()
        return {group: means[group] for group in set(group_of)}

    def _offline_splice(self, prompts: list[Any], online: list[int], result: list[Any],
                        batch: _Batch) -> tuple[Any, ...]:  # fmt: skip
        prompt_ids, completion_ids, tool_mask, completions, logprobs, extra, images, tool_images = (
            result
        )
        if tool_mask is not None or extra or any(tool_images or []):
            raise ValueError("offline mixing does not support tool calls or a rollout_func")
        size = len(prompts)
        where = {row: i for i, row in enumerate(online)}
        fresh = [r for r in sorted(batch.members) if r not in where]  # rows never generated
        own_ids, own_images = [], None
        if fresh:
            with self._native_rows(fresh):
                own_ids, own_images, _ = self._tokenize_prompts(
                    copy.deepcopy([prompts[r] for r in fresh])
                )
        fresh_at = {row: i for i, row in enumerate(fresh)}
        conversational = isinstance(completions[0], list) if completions else True
        out_prompt_ids, out_ids, out_completions, out_images, out_logprobs = [], [], [], [], []
        for row in range(size):
            member = batch.members.get(row)
            if row in fresh_at:
                out_prompt_ids.append(list(own_ids[fresh_at[row]]))
                out_images.append(None if own_images is None else own_images[fresh_at[row]])
            else:
                out_prompt_ids.append(prompt_ids[where[row]])
                out_images.append(None if images is None else images[where[row]])
            if member is None:
                out_ids.append(completion_ids[where[row]])
                out_completions.append(completions[where[row]])
                if logprobs is not None:
                    out_logprobs.append(logprobs[where[row]])
                continue
            ids = member.tokens.ids
            text = self.processing_class.batch_decode([ids], skip_special_tokens=True)[0]
            out_ids.append(list(ids))
            out_completions.append(
                [{"role": "assistant", "content": text}] if conversational else text
            )
            if logprobs is not None:
                out_logprobs.append([None] * len(ids))  # unknown to TRL's vLLM correction: ratio 1
        all_images = None if all(i is None for i in out_images) else out_images
        return (out_prompt_ids, out_ids, None, out_completions,
                out_logprobs if logprobs is not None else None, {}, all_images, [])  # fmt: skip

    def _offline_weights(self, output: dict[str, Any], batch: _Batch) -> Any:
        """min(π_old / μ, cap) per completion token of offline members with behaviour log-probs;
        1 elsewhere (None when no member has log-probs)."""
        import torch

        rows = [r for r, m in sorted(batch.members.items()) if m.tokens.logprobs is not None]
        if not rows:
            return None
        old = output.get("old_per_token_logps")
        if old is None:
            input_ids = torch.cat([output["prompt_ids"], output["completion_ids"]], dim=1)
            mask = torch.cat([output["prompt_mask"], output["completion_mask"]], dim=1)
            forward = {k: v for k, v in output.items() if k not in NOT_FORWARD_INPUTS}
            with torch.no_grad(), self._native_forward_inputs(output.get(INPUTS_KEY)):
                old, _, _ = self._get_per_token_logps_and_entropies(
                    self.model, input_ids, mask, output["completion_ids"].size(1),
                    batch_size=self.args.per_device_train_batch_size, **forward,
                )  # fmt: skip
        weights = torch.ones_like(old)
        cap = self._offline_run.section.cap  # type: ignore[union-attr]
        for row in rows:
            behaviour = torch.tensor(batch.members[row].tokens.logprobs, dtype=old.dtype,
                                     device=old.device)  # fmt: skip
            length = behaviour.numel()
            weights[row, :length] = torch.exp(old[row, :length] - behaviour).clamp(max=cap)
        return weights

    def _offline_finish(self, output: dict[str, Any], batch: _Batch) -> dict[str, Any]:
        import torch

        run = self._offline_run
        assert run is not None
        metrics = self._metrics["train"]
        metrics["offline/generated"].append(float(batch.generated))
        advantages = output["advantages"]
        size = advantages.size(0)
        rewards = [math.nan] * size
        if batch.rewards_per_func is not None:
            start = self.accelerator.process_index * size
            part = batch.rewards_per_func[start : start + size]
            weights = self.reward_weights.to(part.device).unsqueeze(0)
            summed = (part * weights).nansum(dim=1)
            summed[torch.isnan(part).all(dim=1)] = math.nan
            rewards = summed.tolist()
        if run.section.correction == "truncated_is":
            weights = self._offline_weights(output, batch)
            if weights is not None:
                offline_tokens = torch.zeros_like(weights, dtype=torch.bool)
                for row, member in batch.members.items():
                    if member.tokens.logprobs is not None:
                        offline_tokens[row, : len(member.tokens.logprobs)] = True
                metrics["offline/is_weight"].append(weights[offline_tokens].mean().item())
                output["advantages"] = advantages.unsqueeze(1) * weights
        tasks: dict[str, dict[str, list[float]]] = {}
        seen_groups: set[int] = set()
        for row, example in enumerate(batch.inputs):
            stats = tasks.setdefault(example["task_id"], {
                "groups": [], "candidates": [], "mixed": [], "reward": [], "advantage": [],
                "online_accuracy": [], "truncated": [],
            })  # fmt: skip
            group = batch.group_of[row]
            if group not in seen_groups:
                seen_groups.add(group)
                stats["groups"].append(1.0)
                stats["candidates"].append(float(batch.candidates[group]))
                mixed = any(batch.group_of[r] == group for r in batch.members)
                stats["mixed"].append(float(mixed))
                stats["online_accuracy"].append(batch.group_accuracy[group])
            member = batch.members.get(row)
            if member is not None:
                stats["reward"].append(rewards[row])
                stats["advantage"].append(float(advantages[row]))
                stats["truncated"].append(float(member.tokens.truncated))
        for task, stats in tasks.items():
            for name in ("groups", "candidates", "mixed"):
                metrics[f"offline/{task}/{name}"].append(sum(stats[name]))
            for name in ("reward", "advantage", "online_accuracy", "truncated"):
                value = _mean(stats[name])
                if not math.isnan(value):
                    metrics[f"offline/{task}/{name}"].append(value)
        return output


def offline_trainer_class(base: type) -> type:
    """``base`` (the kit's GRPO trainer class) with :class:`OfflineMixing` in front."""
    return _offline_class(base)


@functools.cache
def _offline_class(base: type) -> type:
    return type(base.__name__, (OfflineMixing, base), {})
