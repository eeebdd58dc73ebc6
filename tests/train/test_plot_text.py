"""``videorl-kit plot`` draws task ids and the run folder's name as text, never as maths."""

from __future__ import annotations

from videorl_kit.train.metrics import MetricsLog
from videorl_kit.train.plot import plot_run


def test_task_ids_and_folder_names_with_dollars_are_plotted(tmp_path):
    run = tmp_path / "run $x^{$"
    run.mkdir()
    log = MetricsLog(run / "metrics.jsonl")
    for step in (1, 2):
        log.append(step, {"rewards/$\\bad{$/mean": 0.5, "rewards/b_$x$/mean": 0.25, "kl": 0.1})
    written = plot_run(run)  # mathtext would raise on `$x^{$`
    assert {p.name for p in written} == {"reward_per_task.png", "kl.png"}
