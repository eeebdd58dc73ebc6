"""The random-choice baseline: a seeded uniform guess among each sample's options.

The guess depends only on the run seed and the sample (``GenerationRequest.seed``), so two
runs with the same seed guess the same letters in any order. Samples without options get an
empty answer (they score 0): the baseline measures what chance gets on multiple choice.

Example:
    >>> from videorl_kit.eval.requests import GenerationRequest
    >>> from videorl_kit.spec.eval_section import GenerationParams
    >>> request = GenerationRequest("t", "s", "?", None, "multiple_choice",
    ...     ["A. x", "B. y", "C. z"], GenerationParams(), seed=3)
    >>> RandomChoiceBackend().generate([request]) == RandomChoiceBackend().generate([request])
    True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from videorl_kit.eval.backends.base import Backend
from videorl_kit.eval.records import content_hash
from videorl_kit.eval.requests import GenerationRequest
from videorl_kit.eval.results import ModelInfo

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class RandomChoiceBackend(Backend):
    """Seeded uniform guesses; no model, no media."""

    kind = "random_choice"
    needs_media = False

    def info(self) -> ModelInfo:
        """A fixed fingerprint: the guesses depend only on the run seed."""
        return ModelInfo(
            backend="random_choice",
            name="uniform guess among the options",
            fingerprint=content_hash({"backend": "random_choice", "version": 1}),
        )

    def generate(self, requests: Sequence[GenerationRequest]) -> list[str]:
        """``<answer>X</answer>`` with X drawn uniformly from the options, or "" without options."""
        responses = []
        for request in requests:
            n = min(len(request.options or ()), len(_LETTERS))
            if n == 0:
                responses.append("")
                continue
            index = int(np.random.default_rng(request.seed).integers(n))
            responses.append(f"<answer>{_LETTERS[index]}</answer>")
        return responses
