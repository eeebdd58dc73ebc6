"""Aggregation: grounding mIoU and R@k, clustered errors, macro averages, masked verdicts,
each checked against a direct computation on a hand-made set."""

from __future__ import annotations

import math

import pytest

from videorl_kit.eval.metrics import task_metrics
from videorl_kit.eval.records import SampleRecord
from videorl_kit.rewards import reward_function_for
from videorl_kit.spec.eval_section import MetricsSpec


def record(
    sample_id: str, accuracy: float, *, ptype: str = "multiple_choice", status: str = "ok",
    cluster: str | None = None, categories: dict | None = None, details: dict | None = None,
) -> SampleRecord:  # fmt: skip
    return SampleRecord(
        task_id="t", sample_id=sample_id, row_index=0, problem_type=ptype, doc_hash="d",
        prompt_hash="p", target_hash="g", response_hash="r", prompt="?", target="x",
        response="y", accuracy=accuracy, format=1.0, overall=0.9 * accuracy + 0.1,
        status=status, details=details or {}, cluster=cluster or sample_id,
        categories=categories or {},
    )  # fmt: skip


# A hand-made temporal grounding set: (gold, prediction) in seconds.
GROUNDING = [
    ([0.0, 10.0], [0.0, 10.0]),  # IoU 1
    ([0.0, 10.0], [5.0, 10.0]),  # IoU 0.5 exactly: counts for R@0.5 with >=, not with >
    ([0.0, 10.0], [0.0, 3.0]),  # IoU 0.3 exactly
    ([10.0, 20.0], [12.0, 30.0]),  # IoU 8 / 20 = 0.4
    ([0.0, 4.0], [6.0, 9.0]),  # disjoint: 0
    ([2.0, 6.0], [1.0, 8.0]),  # 4 / 7
]


def direct_iou(gold: list[float], pred: list[float]) -> float:
    inter = max(0.0, min(gold[1], pred[1]) - max(gold[0], pred[0]))
    union = max(gold[1], pred[1]) - min(gold[0], pred[0])
    return inter / union


def grounding_records() -> list[SampleRecord]:
    fn = reward_function_for("temporal_grounding")
    records = []
    for i, (gold, pred) in enumerate(GROUNDING):
        result = fn(f'<answer>{{"time": {pred}}}</answer>', f'{{"time": {gold}}}')
        records.append(record(f"s{i}", result.accuracy, ptype="temporal_grounding"))
    return records


@pytest.mark.parametrize("strict", [False, True])
def test_grounding_miou_and_recall_equal_a_direct_computation(strict):
    ious = [direct_iou(g, p) for g, p in GROUNDING]
    spec = MetricsSpec(recall_strict=strict)
    metrics = task_metrics(grounding_records(), spec).metrics
    assert metrics["miou"].value == pytest.approx(sum(ious) / len(ious))
    for k in (0.3, 0.5, 0.7):
        hits = [(iou > k) if strict else (iou >= k - 1e-12) for iou in ious]
        assert metrics[f"r@{k:g}"].value == pytest.approx(sum(hits) / len(hits)), k
    # the boundary cases really sit on the thresholds, so >= and > differ here
    assert task_metrics(grounding_records(), MetricsSpec()).metrics["r@0.5"].value != (
        task_metrics(grounding_records(), MetricsSpec(recall_strict=True)).metrics["r@0.5"].value
    )
    assert task_metrics(grounding_records(), spec).primary == "miou"


def test_clustered_standard_error_matches_the_formula():
    values = {"a": [1.0, 0.0, 1.0], "b": [1.0], "c": [0.0, 0.0]}
    records = [
        record(f"{c}{i}", v, cluster=c) for c, vs in values.items() for i, v in enumerate(vs)
    ]
    flat = [v for vs in values.values() for v in vs]
    n, mean = len(flat), sum(flat) / len(flat)
    groups = len(values)
    se = (
        math.sqrt(
            groups / (groups - 1) * sum(sum(v - mean for v in vs) ** 2 for vs in values.values())
        )
        / n
    )
    metric = task_metrics(records, MetricsSpec()).metrics["accuracy"]
    assert (metric.value, metric.n) == (pytest.approx(mean), n)
    assert metric.stderr == pytest.approx(se)
    # one sample per cluster: the usual standard error of the mean
    singles = [record(f"s{i}", v) for i, v in enumerate(flat)]
    sd = math.sqrt(sum((v - mean) ** 2 for v in flat) / (n - 1))
    assert task_metrics(singles, MetricsSpec()).metrics["accuracy"].stderr == pytest.approx(
        sd / math.sqrt(n)
    )


def test_macro_average_over_tasks_then_categories_as_ovo_bench_does():
    rows = [
        ("backward", "EPM", 1.0), ("backward", "EPM", 0.0), ("backward", "HLD", 1.0),
        ("forward", "REC", 0.0), ("forward", "REC", 0.0), ("forward", "REC", 1.0),
        ("forward", "SSR", 1.0), ("realtime", "OCR", 0.5),
    ]  # fmt: skip
    records = [
        record(f"s{i}", acc, categories={"cat": cat, "task": task})
        for i, (cat, task, acc) in enumerate(rows)
    ]
    spec = MetricsSpec(categories=["cat", "task"], macro_over=["cat", "task"])
    result = task_metrics(records, spec)
    backward = (0.5 + 1.0) / 2
    forward = (1 / 3 + 1.0) / 2
    realtime = 0.5
    assert result.primary == "macro"
    assert result.metrics["macro"].value == pytest.approx((backward + forward + realtime) / 3)
    assert result.metrics["accuracy"].value == pytest.approx(sum(r[2] for r in rows) / len(rows))
    table = {row.value: row for row in result.categories["task"]}
    assert table["REC"].n == 3 and table["REC"].score == pytest.approx(1 / 3)


def test_mra_is_reported_apart_from_accuracy_and_masked_verdicts_are_not_zeros():
    records = [
        record("m1", 1.0), record("m2", 0.0),
        record("r1", 0.8, ptype="regression"), record("r2", 0.4, ptype="regression"),
        record("u1", 0.0, status="unverifiable"), record("e1", 0.0, status="error"),
    ]  # fmt: skip
    result = task_metrics(records, MetricsSpec())
    assert result.metrics["accuracy"].value == pytest.approx(0.5)
    assert result.metrics["accuracy"].n == 2
    assert result.metrics["mra"].value == pytest.approx(0.6)
    assert (result.n_scored, result.n_unverifiable, result.n_error) == (4, 1, 1)
    assert {row.value for row in result.categories["problem_type"]} == {
        "multiple_choice", "regression",
    }  # fmt: skip


def test_spatiotemporal_parts_come_from_the_verdict_details():
    records = [
        record(
            "a", 0.75, ptype="spatiotemporal_grounding", details={"t_iou": 1.0, "mean_box_iou": 0.5}
        ),
        record(
            "b", 0.25, ptype="spatiotemporal_grounding", details={"t_iou": 0.5, "mean_box_iou": 0.0}
        ),
    ]
    metrics = task_metrics(records, MetricsSpec()).metrics
    assert metrics["st_score"].value == pytest.approx(0.5)
    assert metrics["t_iou"].value == pytest.approx(0.75)
    assert metrics["box_miou"].value == pytest.approx(0.25)


def test_a_declared_primary_without_samples_is_noted_not_invented():
    result = task_metrics([record("a", 1.0)], MetricsSpec(primary="miou"))
    assert result.metrics["miou"].value is None
    assert "no samples" in result.notes[0]
