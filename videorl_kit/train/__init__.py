"""Training: recipe models, algorithm names mapped onto backend options, the runner, tiny models.

The kit never implements PPO/GRPO itself: a recipe names the tasks, the frame store, the
algorithm and a backend, and a backend adapter (``videorl_kit.adapters.trl`` or
``videorl_kit.adapters.openrlhf``) hands specs, cached frames and verifiers to a real engine.

Importing this package is cheap: heavy dependencies load inside the functions that need them.
"""
