"""Strict, total, explainable rewards: raw response -> extraction -> verifier -> RewardResult.

Public API (import from the submodules, or lazily from here):

* :func:`reward_function_for` (``router``): build a picklable, thread-safe reward function::

      >>> from videorl_kit.rewards import reward_function_for
      >>> fn = reward_function_for("multiple choice")          # aliases accepted
      >>> r = fn("<think>A man enters.</think><answer>(C)</answer>", "C")
      >>> r.accuracy, r.format, r.overall, r.status
      (1.0, 1.0, 1.0, 'ok')
      >>> fn.score_batch([{"response": "The answer is B", "answer": "C"}])[0].overall
      0.0

  ``reward_function_for(problem_type, verifier=("numeric", 2, {"abs_tol": 0.5}),
  format_rule="answer_tag", weights=(0.9, 0.1), answer_source="auto")``;
  :func:`reward_function_from_spec(spec)` reads ``spec.problem_type``, ``spec.verifier`` and
  ``spec.reward``.
* :class:`TaskReward` (``task``): a spec's reward routed per row (the verifier of each row's
  problem type, the spec's weights and format rule); ``TaskReward.from_spec(spec)``.
* :class:`TaskRewardFunction`, :func:`trl_reward_functions` (``trl_functions``): one reward
  function per task in TRL's shape, ``f(prompts, completions, **columns)``.
* :class:`RewardResult` (``result``): ``accuracy``, ``format``, ``overall`` (floats in [0, 1]),
  ``status`` (``"ok"`` | ``"unverifiable"`` | ``"error"``; ``masked`` is True for the last two),
  ``details`` (dict; ``to_dict()`` for JSON).
* :func:`extract_answer` (``extract``): the shared extraction pipeline; returns an
  :class:`Extraction` with every step (answer blocks, final statement, hedge flag, ...).
* :func:`format_score` (``format``): the format rules ``answer_tag`` and ``none``.
* Registry (:mod:`videorl_kit.core.verifiers`): :func:`get_verifier`, :func:`default_verifier_name`,
  :func:`available_verifiers` (name -> versions), :func:`verifier_infos`,
  :class:`UnknownVerifierError`, :func:`register_verifier`.
  Entry-point group for third-party verifiers: ``videorl_kit.verifiers``.
* Writing a verifier: see :mod:`videorl_kit.rewards.base` (``VerifyOutcome``) and
  ``docs/extending.md``.

Built-in verifiers: choice, numeric, mra, boolean, temporal_iou, box_iou, spatiotemporal_iou,
tracking_iou, wer, rouge, math and preference at version 2, code_exec at version 3; the
changelog is in docs/verifiers.md.

Importing this package is cheap: submodules load on first attribute access. It imports
:mod:`videorl_kit.rewards.registry` (the kit's problem types and where each built-in verifier
lives, nothing heavy), so the kit's types are registered even where its entry points are not
installed (a run bundle's copy of the kit).
"""

from __future__ import annotations

from videorl_kit.core.lazy import lazy_exports
from videorl_kit.rewards import registry as registry

_LAZY = {
    "RewardResult": "videorl_kit.rewards.result",
    "Extraction": "videorl_kit.rewards.extract",
    "extract_answer": "videorl_kit.rewards.extract",
    "format_score": "videorl_kit.rewards.format",
    "RewardFunction": "videorl_kit.rewards.router",
    "reward_function_for": "videorl_kit.rewards.router",
    "reward_function_from_spec": "videorl_kit.rewards.router",
    "TaskReward": "videorl_kit.rewards.task",
    "TaskRewardFunction": "videorl_kit.rewards.trl_functions",
    "trl_reward_functions": "videorl_kit.rewards.trl_functions",
    "VerifyOutcome": "videorl_kit.rewards.base",
    "NoParams": "videorl_kit.core.verifiers",
    "get_verifier": "videorl_kit.core.verifiers",
    "default_verifier_name": "videorl_kit.core.verifiers",
    "available_verifiers": "videorl_kit.core.verifiers",
    "verifier_infos": "videorl_kit.core.verifiers",
    "register_verifier": "videorl_kit.core.verifiers",
    "UnknownVerifierError": "videorl_kit.core.verifiers",
    "VerifierInfo": "videorl_kit.core.verifiers",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
