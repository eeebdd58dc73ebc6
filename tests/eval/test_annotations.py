"""Benchmark rows in their own layout: media templates, lettered options, answer forms, type
labels; an unreadable row is a named skip; overrides re-validate the whole spec."""

from __future__ import annotations

import json

import pytest

from videorl_kit.core.errors import UserError
from videorl_kit.spec.annotations import apply_layout
from videorl_kit.spec.data import iter_samples
from videorl_kit.spec.eval_section import AnnotationLayout
from videorl_kit.spec.models import FieldMap, TaskSpec
from videorl_kit.spec.overrides import apply_overrides

LVB_FIELDS = FieldMap(question="question", answer="correct_choice", videos="videos",
                      options="candidates")  # fmt: skip


def test_a_hub_row_becomes_a_sample_row():
    layout = AnnotationLayout(video="videos/{video_path}", options="unlettered",
                              answer="option_index")  # fmt: skip
    row = {"question": "Q?", "candidates": ["sits", "leaves", "jumps"], "correct_choice": 2,
           "video_path": "abc.mp4", "duration_group": 600}  # fmt: skip
    out = apply_layout(row, layout, LVB_FIELDS)
    assert out["videos"] == ["videos/abc.mp4"]
    assert out["candidates"] == ["A. sits", "B. leaves", "C. jumps"]
    assert out["correct_choice"] == "C"
    assert row["correct_choice"] == 2  # the raw row is left as it was
    assert out["duration_group"] == 600


@pytest.mark.parametrize(
    ("gold", "expected"),
    [("13.4-28.1", [13.4, 28.1]), ("0 - 4.4", [0.0, 4.4]), ([24.3, 30.4], [24.3, 30.4]),
     ("5 to 9", [5.0, 9.0])],
)  # fmt: skip
def test_time_spans_become_the_grounding_verifiers_form(gold, expected):
    fields = FieldMap(answer="answer")
    out = apply_layout({"answer": gold}, AnnotationLayout(answer="time_span"), fields)
    assert json.loads(out["answer"]) == {"time": expected}


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ({"answer": "soon"}, "column 'answer': 'soon' is not a 'start-end' time span"),
        ({"answer": [1]}, "column 'answer': [1] is not a time span"),
    ],
)
def test_unreadable_answers_give_the_reason(row, reason):
    assert apply_layout(row, AnnotationLayout(answer="time_span"), FieldMap()) == reason


def test_option_indices_are_checked():
    layout = AnnotationLayout(answer="option_index")
    assert "out of range 0..2" in apply_layout(
        {"correct_choice": 3, "candidates": ["a", "b", "c"]}, layout, LVB_FIELDS
    )
    assert "must be an integer option index" in apply_layout(
        {"correct_choice": True, "candidates": ["a"]}, layout, LVB_FIELDS
    )


def test_a_template_column_missing_from_a_row_is_named():
    layout = AnnotationLayout(video="{dataset}/{scene_name}.mp4")
    reason = apply_layout({"dataset": "scannet"}, layout, FieldMap())
    assert reason == "video template '{dataset}/{scene_name}.mp4' needs column 'scene_name'"


@pytest.mark.parametrize("template", ["{row.__class__}", "{x[0]}", "{x!r}", "{x:>10}", "plain"])
def test_templates_only_paste_column_values(template):
    with pytest.raises(ValueError):
        AnnotationLayout(video=template)


def test_type_labels_map_to_problem_types_and_a_bad_row_is_a_named_skip(tmp_path):
    rows = [
        {"problem": "How many?", "solution": "<answer>2</answer>", "problem_type": "REC"},
        {"problem": "Happening?", "solution": "<answer>No</answer>", "problem_type": "CRR"},
        {"problem": "Which?", "solution": "<answer>B</answer>", "problem_type": "XYZ"},
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = TaskSpec.model_validate({
        "id": "labels", "version": 1, "problem_type": "from_row",
        "data": {"path": str(data), "fields": {"question": "problem", "answer": "solution"}},
        "prompt": {"template": "{{ question }}"},
        "eval": {"annotations": {"problem_types": {"REC": "number", "CRR": "yes/no"}}},
    })  # fmt: skip
    samples = list(iter_samples(spec))
    assert [s.problem_type.value for s in samples[:2]] == ["numerical", "boolean"]
    assert samples[2].skip_reason.startswith("row 3: unknown problem type 'XYZ' (valid: ")
    assert samples[0].raw["problem_type"] == "REC"  # categories and hashes see the raw row


def test_an_unreadable_answer_is_a_named_skip(tmp_path):
    data = tmp_path / "rows.json"
    data.write_text(json.dumps([{"question": "When?", "answer": "soon", "path": "v.mp4"}]))
    spec = TaskSpec.model_validate({
        "id": "tg", "version": 1, "problem_type": "temporal_grounding",
        "data": {"path": str(data), "fields": {"question": "question", "videos": "path"}},
        "prompt": {"template": "{{ question }}"}, "eval": {"annotations": {"answer": "time_span"}},
    })  # fmt: skip
    (sample,) = iter_samples(spec)
    assert sample.skip_reason == "row 1: column 'answer': 'soon' is not a 'start-end' time span"
    assert sample.skip_rule == "malformed_row"


def test_overrides_target_one_task_or_all_and_revalidate():
    spec = TaskSpec.model_validate({
        "id": "a", "version": 1, "problem_type": "ocr", "data": {"path": "x.jsonl"},
        "prompt": {"template": "{{ question }}"},
    })  # fmt: skip
    assert apply_overrides(spec, ["other:budget.video.fps=4"]).budget.video.fps == 2.0
    updated = apply_overrides(spec, ["a:budget.video.fps=4", "eval.generation.temperature=0.7"])
    assert updated.budget.video.fps == 4.0 and updated.eval.generation.temperature == 0.7
    with pytest.raises(UserError, match=r"budget.video.fps: Input should be greater than 0"):
        apply_overrides(spec, ["budget.video.fps=-1"])
    with pytest.raises(UserError, match=r"expected \[TASK:\]dotted.path=value"):
        apply_overrides(spec, ["budget.video.fps"])
