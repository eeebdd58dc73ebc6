"""OpenRLHF backend: run bundles for OpenRLHF 0.11.2's Ray PPO/GRPO engine on GPU clusters."""
