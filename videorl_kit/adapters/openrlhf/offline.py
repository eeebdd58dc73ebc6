"""Mixed offline/online GRPO groups on OpenRLHF 0.11.2: the bundle's selected trajectories and
the agent step that returns them for a group's offline members.

The bundle carries ``offline.json`` (:func:`write_offline_file`): the section's settings and,
per (task, sample), the trajectories a run may use (``best`` / ``newest``: the first
``per_group``; ``random``: all of them, drawn per group). The native-video agent
(:mod:`.video_agent`) wraps each rollout in :meth:`OfflineMembers.execute`.

Which member a call is: OpenRLHF's rollout actor runs a prompt's ``n`` samples as ``n``
``execute`` coroutines gathered in order (``generate_responses``), each on the same actor, and
the first step of each coroutine (before any ``await``) runs in that order. So the ``i``-th
call for a (task, sample) on an actor is member ``i mod n`` of that sample's group
``i div n`` there; the last ``per_group`` members are the offline slots, as on TRL.

What this relies on in OpenRLHF 0.11.2: ``openrlhf/trainer/ppo_utils/samples_generator.py``
lines 226-238 send each prompt once to one engine actor with ``num_samples=n_samples``, and
``openrlhf/trainer/ray/vllm_engine.py`` lines 183-206 (``LLMRayActor.generate_responses``)
build the ``n`` ``executor.execute`` coroutines in a list and ``asyncio.gather`` them, which
wraps them in tasks in list order; the event loop starts ready tasks first in, first out, so
the ``n`` first steps of one call run before those of a later call on the same actor, even
when the same sample is sent twice at once. :meth:`OfflineMembers.execute` takes its member
index in that first step (before its first ``await``). A change of those lines (samples of a
prompt spread over calls or engines, or an ``await`` before the executor) breaks it.

``when: always``: an offline slot returns the stored response without asking vLLM (``n - k``
generated). ``when: below_accuracy``: every member is generated and scored; the slots wait
until their group's ``n`` online accuracies are in and are replaced when the mean is below the
threshold (the cost: ``n`` generations, of which the replaced are thrown away).

A stored response becomes rollout tokens as on TRL (:func:`~videorl_kit.train.offline.tokens.
rollout_tokens`: end-of-turn token appended, cut to the sampling budget with the cut recorded)
and is scored by the bundle's reward like any other member. Every result carries the same
extra logs: ``offline`` (1 for an offline member), ``offline_truncated`` and
``offline_online_accuracy`` (the group's online accuracy before mixing; NaN for ``always``).

Example:
    >>> members = OfflineMembers({"n": 4, "per_group": 1, "when": "always", "select": "best",
    ...     "accuracy_threshold": None, "seed": 0, "samples": {"t\\ts1": [{"response": "x"}]}})
    >>> [members.next_member("t", "s1")[1] for _ in range(5)]
    [0, 1, 2, 3, 0]
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
from copy import deepcopy
from pathlib import Path
from typing import Any

from videorl_kit.adapters.openrlhf.labels import decode_label
from videorl_kit.train.offline.select import load_pool
from videorl_kit.train.offline.tokens import rollout_tokens

OFFLINE_FILE = "offline.json"


def offline_payload(
    pool: Any, section: Any, *, n: int, seed: int, tokenizer_ids: frozenset[str]
) -> dict[str, Any]:
    """What ``offline.json`` holds: the section's settings and each sample's usable
    trajectories (token ids and behaviour log-probs only when made with the run's tokenizer).

    Example:
        >>> from videorl_kit.train.offline.section import OfflineSection
        >>> from videorl_kit.train.offline.select import OfflinePool
        >>> section = OfflineSection(source="c", correction="none")
        >>> payload = offline_payload(OfflinePool(section, {}, {}), section, n=4, seed=0,
        ...                           tokenizer_ids=frozenset())
        >>> payload["n"], payload["samples"]
        (4, {})
    """
    samples: dict[str, list[dict[str, Any]]] = {}
    for task_id, sample_id in sorted(pool.by_sample):
        rows = []
        for candidate in pool.usable(task_id, sample_id):
            own = candidate.token_ids is not None and candidate.tokenizer_id in tokenizer_ids
            rows.append({
                "trajectory_id": candidate.trajectory_id,
                "response": candidate.response,
                "token_ids": candidate.token_ids if own else None,
                "logprobs": candidate.behaviour_logprobs if own else None,
            })  # fmt: skip
        if rows:
            samples[f"{task_id}\t{sample_id}"] = rows
    return {"n": n, "per_group": section.per_group, "when": section.when,
            "select": section.select, "accuracy_threshold": section.accuracy_threshold,
            "correction": section.correction, "seed": seed, "samples": samples}  # fmt: skip


def write_offline_file(plan: Any, root: Path) -> tuple[Path, int]:
    """Write a plan's ``offline.json`` into the bundle ``root``; returns it and how many
    samples have trajectories."""

    section = plan.recipe.offline
    pool = load_pool(plan.store, section, [entry.spec.id for entry in plan.loaded.tasks])
    names = {plan.model.describe(), plan.model_name_or_path}
    payload = offline_payload(pool, section, n=plan.recipe.rollout.group_size,
                              seed=plan.recipe.seed, tokenizer_ids=frozenset(names))  # fmt: skip
    path = root / OFFLINE_FILE
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path, len(payload["samples"])


class _Group:
    """The online accuracies of one group (``below_accuracy``)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.accuracy: list[float] = []
        self.complete = asyncio.Event()
        self.left = n

    def add(self, accuracy: float) -> None:
        self.accuracy.append(accuracy)
        if len(self.accuracy) == self.n:
            self.complete.set()

    @property
    def mean(self) -> float:
        finite = [a for a in self.accuracy if not math.isnan(a)]
        return sum(finite) / len(finite) if finite else math.nan


class OfflineMembers:
    """The offline members of a rollout actor's groups (see the module doc)."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self.settings = payload
        self.n = int(payload["n"])
        self.k = int(payload["per_group"])
        self.samples: dict[str, list[dict[str, Any]]] = payload["samples"]
        self.calls: dict[str, int] = {}
        self.groups: dict[tuple[str, int], _Group] = {}

    @classmethod
    def from_file(cls, path: str | Path) -> OfflineMembers:
        """Read a bundle's ``offline.json``."""
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))

    def next_member(self, task_id: str, sample_id: str) -> tuple[int, int, dict | None]:
        """The group, member index and stored trajectory (None: an online member) of the next
        call for a sample."""
        key = f"{task_id}\t{sample_id}"
        count = self.calls.get(key, 0)
        self.calls[key] = count + 1
        group, member = divmod(count, self.n)
        found = self.samples.get(key, [])
        if self.settings["select"] == "random" and len(found) > self.k:
            digest = hashlib.sha256(f"{self.settings['seed']}:{key}:{group}".encode()).digest()
            found = random.Random(int.from_bytes(digest[:8], "big")).sample(found, self.k)
        slot = member - (self.n - self.k)
        return group, member, (found[slot] if 0 <= slot < len(found) else None)

    async def execute(self, reward: Any, prompt: str, label: Any, sampling_params: Any,
                      max_length: int, processor: Any, online: Any,
                      train_inputs: Any) -> dict[str, Any]:  # fmt: skip
        """One member of a group: ``online()`` (an awaitable factory) rolls it out with vLLM;
        ``train_inputs()`` gives the prompt's training ids and processor tensors."""
        row = decode_label(label)
        group, _, stored = self.next_member(row.task_id, row.sample_id)
        online_accuracy = math.nan
        if stored is not None and self.settings["when"] == "always":
            return self._stored(reward, prompt, label, sampling_params, max_length, processor,
                                train_inputs(), stored, online_accuracy)  # fmt: skip
        if self.settings["when"] != "below_accuracy":
            result = await online()
        else:
            key = (f"{row.task_id}\t{row.sample_id}", group)
            state = self.groups.setdefault(key, _Group(self.n))
            try:
                result = await online()
            except BaseException:  # the group's other members must not wait for this one
                state.add(math.nan)
                state.left -= 1
                if state.left == 0:
                    self.groups.pop(key, None)
                raise
            query = processor.decode(result["observation_tokens"], skip_special_tokens=False)
            scored = reward.score(query, prompt, label)
            state.add(scored.accuracy if scored.error is None else math.nan)
            await state.complete.wait()
            state.left -= 1
            if state.left == 0:
                self.groups.pop(key, None)
            online_accuracy = state.mean
            threshold = float(self.settings["accuracy_threshold"])
            if stored is not None and online_accuracy < threshold:
                return self._stored(reward, prompt, label, sampling_params, max_length,
                                    processor, train_inputs(), stored, online_accuracy)  # fmt: skip
        result["extra_logs"] = {**result["extra_logs"], "offline": 0.0,
                                "offline_truncated": 0.0,
                                "offline_online_accuracy": online_accuracy}  # fmt: skip
        return result

    def _stored(self, reward: Any, prompt: str, label: Any, sampling_params: Any,
                max_length: int, processor: Any, inputs: dict[str, Any], stored: dict[str, Any],
                online_accuracy: float) -> dict[str, Any]:  # fmt: skip
        train_ids = inputs["train_ids"]
        limit = sampling_params.max_tokens or max(1, max_length - len(train_ids))
        tokens = rollout_tokens(processor, stored["response"], limit,
                                stored_ids=stored.get("token_ids"),
                                stored_logprobs=stored.get("logprobs"))  # fmt: skip
        observation = list(train_ids) + tokens.ids
        rollout_log_probs = None
        if sampling_params.logprobs is not None:  # truncated_is: the behaviour log-probs
            behaviour = tokens.logprobs or [0.0] * len(tokens.ids)
            rollout_log_probs = [0.0] * len(train_ids) + list(behaviour)
        query = processor.decode(observation, skip_special_tokens=False)
        scored = reward([query], [prompt], [label])
        extra = {**deepcopy(scored["extra_logs"]), "offline": 1.0,
                 "offline_truncated": float(tokens.truncated),
                 "offline_online_accuracy": online_accuracy}  # fmt: skip
        return {
            "prompt": prompt,
            "label": label,
            "images": inputs.get("refs"),
            "mm_train_inputs": inputs["mm_train_inputs"],
            "observation_tokens": observation,
            "action_ranges": [(len(train_ids), len(observation))],
            "rollout_log_probs": rollout_log_probs,
            "truncated": tokens.truncated,
            "reward": scored["rewards"],
            "scores": scored["scores"],
            "extra_logs": extra,
        }
