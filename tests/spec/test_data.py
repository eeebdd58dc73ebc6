"""Reading data rows into samples: formats, field maps, media roots, malformed rows."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.spec.conftest import MINIMAL
from videorl_kit.core.errors import UserError
from videorl_kit.core.problem_types import ProblemType
from videorl_kit.spec import load_spec
from videorl_kit.spec.data import iter_samples
from videorl_kit.spec.prompt import render_prompt


def test_jsonl_rows_become_samples(write, rows, tmp_path):
    spec = load_spec(write("t.yaml", MINIMAL))
    first, second = iter_samples(spec)
    assert first.sample_id == "s0" and second.sample_id == "demo-count-1"
    assert first.answer == "3" and second.answer == "2"
    assert first.videos == [tmp_path / "media" / "a.mp4"]
    assert first.problem_type is ProblemType.NUMERICAL and first.skip_reason is None
    assert (
        render_prompt(spec, first)
        == "How many circles?\nPut the final answer in <answer></answer>."
    )


def test_malformed_rows_are_kept_with_a_reason(write, tmp_path):
    (tmp_path / "rows.jsonl").write_text(
        '{"problem": "ok?", "answer": "yes"}\n'
        "{not json\n"
        '{"answer": "no"}\n'
        '{"problem": "q", "answer": "a", "videos": [3]}\n'
        '{"problem": "q", "answer": "a", "problem_type": "weird"}\n'
    )
    samples = list(iter_samples(load_spec(write("t.yaml", MINIMAL))))
    assert [s.skip_reason for s in samples] == [
        None,
        "row 2: invalid JSON (Expecting property name enclosed in double quotes)",
        "row 3: missing field 'problem'",
        "row 4: field 'videos' must be a list of paths",
        "row 5: " + samples[4].skip_reason.split(": ", 1)[1],
    ]
    assert "unknown problem type 'weird'" in samples[4].skip_reason


def test_grounding_answers_are_json_text_and_field_map_renames(write, tmp_path):
    (tmp_path / "g.json").write_text(
        json.dumps([{"q": "When?", "gt": {"time": [1.0, 2.5]}, "clip": "x.mp4"}])
    )
    text = MINIMAL.replace("rows.jsonl", "g.json").replace("numerical", "temporal_grounding")
    text = text.replace(
        "  media_root: media\n", "  fields: {question: q, answer: gt, videos: clip}\n"
    )
    (sample,) = iter_samples(load_spec(write("t.yaml", text)))
    assert json.loads(sample.answer) == {"time": [1.0, 2.5]}
    assert sample.videos == [tmp_path / "x.mp4"]  # media root defaults to the data file's folder


def test_parquet_rows_and_limit(write, tmp_path):
    table = pa.table({"problem": ["a", "b", "c"], "answer": ["1", "2", "3"]})
    pq.write_table(table, tmp_path / "rows.parquet")
    text = MINIMAL.replace("rows.jsonl", "rows.parquet")
    text = text.replace("  media_root: media\n", "  media_root: media\n  limit: 2\n")
    samples = list(iter_samples(load_spec(write("t.yaml", text))))
    assert [s.question for s in samples] == ["a", "b"]


def test_missing_data_file_is_a_user_error(write):
    spec = load_spec(write("t.yaml", MINIMAL))
    with pytest.raises(UserError, match=r"rows.jsonl: data file not found"):
        list(iter_samples(spec))


def test_template_sees_options_and_row_and_is_sandboxed(write, tmp_path):
    (tmp_path / "rows.jsonl").write_text(
        json.dumps(
            {"problem": "Colour?", "answer": "A", "options": ["A. Red", "B. Blue"], "hint": "h"}
        )
        + "\n"
    )
    text = MINIMAL.replace("numerical", "multiple_choice").replace(
        '"{{ question }}\\nPut the final answer in <answer></answer>."',
        '"{{ question }} ({{ row.hint }})\\n{% for o in options %}{{ o }}\\n{% endfor %}"',
    )
    spec = load_spec(write("t.yaml", text))
    (sample,) = iter_samples(spec)
    assert render_prompt(spec, sample) == "Colour? (h)\nA. Red\nB. Blue\n"
    evil = spec.model_copy(
        update={"prompt": spec.prompt.model_copy(update={"template": "{{ ''.__class__.__mro__ }}"})}
    )
    with pytest.raises(UserError, match="cannot render prompt template"):
        render_prompt(evil, sample)
