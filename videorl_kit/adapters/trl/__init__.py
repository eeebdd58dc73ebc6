"""The embedded TRL backend (``videorl-kit train --backend trl``).

TRL 1.16's ``GRPOTrainer`` (``RLOOTrainer`` for RLOO) runs in this process on a
``datasets.Dataset`` whose frames are read from the Lance cache, with one reward function per
task from its spec's verifier. See :mod:`videorl_kit.adapters.trl.backend`.

With your own ``GRPOTrainer``: :func:`grpo_dataset` gives the kit's cached samples as a
``datasets.Dataset``, :func:`keep_cached_sizes` keeps the processor from resizing the cached
frames, :func:`trl_reward_functions` gives one reward function per task.

Example:
    >>> TrlBackend().name
    'trl'
"""

from videorl_kit.adapters.trl.backend import TrlBackend
from videorl_kit.adapters.trl.dataset import grpo_dataset, keep_cached_sizes
from videorl_kit.rewards.trl_functions import trl_reward_functions

__all__ = ["TrlBackend", "grpo_dataset", "keep_cached_sizes", "trl_reward_functions"]
