"""Offline trajectories: import (re-scored), statistics, export, and mixing into GRPO groups.

The store's ``trajectories`` table holds model responses with their rewards: eval runs append
theirs (``eval --trajectories``), ``videorl-kit trajectories import`` adds curated files (the
kit's JSONL/JSON/Parquet layout, the public sets' ``has_offline_trajectory`` /
``offline_output`` rows, eval ``samples_<task>.jsonl`` files), every response scored again with
the kit's verifier. A recipe's ``offline:`` section then mixes selected trajectories into GRPO
groups on both backends (:mod:`.section`, :mod:`.select`, :mod:`.replay`).

Modules: :mod:`.readers` (rows of a file, with their lines), :mod:`.layouts` (what a row
means), :mod:`.importer`, :mod:`.stats`, :mod:`.export`, :mod:`.tokens` (a stored response as
rollout tokens). Importing this package is cheap.
"""
