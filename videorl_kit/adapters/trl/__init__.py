"""The embedded TRL backend (``videorl-kit train --backend trl``).

TRL 1.16's ``GRPOTrainer`` (``RLOOTrainer`` for RLOO) runs in this process on a
``datasets.Dataset`` whose frames are read from the Lance cache, with one reward function per
task from its spec's verifier. See :mod:`videorl_kit.adapters.trl.backend`.

Example:
    >>> TrlBackend().name
    'trl'
"""

from videorl_kit.adapters.trl.backend import TrlBackend

__all__ = ["TrlBackend"]
