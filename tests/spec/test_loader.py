"""Loading and validating specs: every malformed spec gets one precise message per error."""

from __future__ import annotations

import pytest

from tests.spec.conftest import MINIMAL
from videorl_kit.core.problem_types import ProblemType
from videorl_kit.spec import SpecError, load_spec


def messages(path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return [str(issue) for issue in info.value.issues]


def test_minimal_spec_loads_with_defaults(write):
    spec = load_spec(write("t.yaml", MINIMAL))
    assert spec.id == "demo-count"
    assert spec.problem_type is ProblemType.NUMERICAL
    assert (spec.verifier.name, spec.verifier.version) == ("numeric", 2)
    assert spec.budget.video.fps == 2.0 and spec.budget.video.patch == 28
    assert spec.reward.weights.accuracy == 0.9
    assert spec.source_file.name == "t.yaml"
    assert spec.resolve("rows.jsonl") == spec.source_file.parent / "rows.jsonl"


def test_design_contract_minimal_form_loads(write):
    spec = load_spec(
        write(
            "c.yaml",
            """\
            id: synth-count
            version: 1
            problem_type: numerical
            data:
              path: data/synth/count.jsonl
              media_root: data/synth
              fields: {question: problem, answer: answer, videos: videos, images: images, options: options}
            budget:
              video: {fps: 2.0, min_frames: 4, max_frames: 32, min_pixels: 3136, max_pixels: 200704, patch: 28}
              image: {min_pixels: 3136, max_pixels: 1003520, patch: 28}
            verifier: {name: numeric, version: 2, params: {abs_tol: 0.5}}
            reward: {format: answer_tag, weights: {accuracy: 0.9, format: 0.1}}
            prompt: {template: "{{ question }}\\nPut the final answer in <answer></answer>."}
            """,
        )
    )
    assert spec.verifier.params == {"abs_tol": 0.5}


def test_problem_type_aliases_are_canonicalised(write):
    spec = load_spec(write("t.yaml", MINIMAL.replace("numerical", "spatial-temporal grounding")))
    assert spec.problem_type is ProblemType.SPATIOTEMPORAL_GROUNDING
    assert spec.verifier.name == "spatiotemporal_iou"


def test_unknown_key_names_line_and_suggests(write):
    path = write("t.yaml", MINIMAL + "budget:\n  video: {fsp: 2}\n")
    assert messages(path) == ["t.yaml:10: budget.video.fsp: unknown key 'fsp'; did you mean 'fps'?"]


def test_unknown_top_level_key_lists_allowed_keys(write):
    path = write("t.yaml", MINIMAL + "colour: red\n")
    (message,) = messages(path)
    assert message.startswith("t.yaml:9: colour: unknown key 'colour' (allowed: id, version,")


def test_wrong_type(write):
    path = write("t.yaml", MINIMAL.replace("version: 1", "version: one"))
    assert messages(path) == [
        "t.yaml:2: version: Input should be a valid integer, unable to parse string as an integer"
    ]


def test_missing_include(write):
    path = write("t.yaml", "include: base.yaml\n" + MINIMAL)
    (message,) = messages(path)
    assert message.startswith("t.yaml:1: include: included file not found: base.yaml")


def test_include_merges_and_local_keys_win(write):
    write("_base.yaml", "version: 7\nbudget:\n  video: {fps: 1.0, max_frames: 8}\n")
    spec = load_spec(
        write("t.yaml", "include: _base.yaml\n" + MINIMAL + "budget:\n  video: {fps: 4.0}\n")
    )
    assert spec.version == 1  # local wins
    assert spec.budget.video.fps == 4.0  # local wins inside a nested mapping
    assert spec.budget.video.max_frames == 8  # inherited


def test_include_cycle_prints_the_cycle(write):
    write("a.yaml", "include: b.yaml\nid: a\n")
    write("b.yaml", "include: c.yaml\n")
    write("c.yaml", "include: a.yaml\n")
    assert messages("a.yaml") == [
        "c.yaml:1: include: include cycle: a.yaml -> b.yaml -> c.yaml -> a.yaml"
    ]


def test_error_in_included_file_points_at_that_file(write):
    write("_base.yaml", "budget:\n  video:\n    min_frames: 40\n    max_frames: 8\n")
    assert messages(write("t.yaml", "include: _base.yaml\n" + MINIMAL)) == [
        "_base.yaml:3: budget.video.min_frames: 40 exceeds max_frames (8)"
    ]


def test_bad_template(write):
    path = write("t.yaml", MINIMAL.replace("{{ question }}", "{{ question "))
    (message,) = messages(path)
    assert message.startswith(
        "t.yaml:8: prompt.template: template syntax error on template line 2:"
    )


def test_min_greater_than_max_pixels(write):
    path = write(
        "t.yaml", MINIMAL + "budget:\n  image:\n    min_pixels: 9000\n    max_pixels: 10\n"
    )
    assert messages(path) == ["t.yaml:11: budget.image.min_pixels: 9000 exceeds max_pixels (10)"]


def test_unknown_problem_type(write):
    (message,) = messages(write("t.yaml", MINIMAL.replace("numerical", "numericl")))
    assert message.startswith(
        "t.yaml:3: problem_type: unknown problem type 'numericl'; did you mean 'numerical'"
    )


def test_unknown_verifier(write):
    (message,) = messages(write("t.yaml", MINIMAL + "verifier: {name: numric}\n"))
    assert message.startswith(
        "t.yaml:9: verifier.name: unknown verifier 'numric'; did you mean 'numeric'?"
    )


def test_verifier_must_fit_problem_type(write):
    (message,) = messages(write("t.yaml", MINIMAL + "verifier: {name: box_iou}\n"))
    assert message.startswith(
        "t.yaml:9: verifier.name: verifier 'box_iou' does not score 'numerical'"
    )


def test_unknown_verifier_param(write):
    path = write("t.yaml", MINIMAL + "verifier:\n  name: numeric\n  params: {abs_tl: 1}\n")
    (message,) = messages(path)
    assert message.startswith(
        "t.yaml:11: verifier.params.abs_tl: unknown parameter 'abs_tl' for verifier 'numeric'; "
        "did you mean 'abs_tol'?"
    )


def test_weights_must_sum_to_one(write):
    path = write("t.yaml", MINIMAL + "reward: {weights: {accuracy: 0.5, format: 0.1}}\n")
    (message,) = messages(path)
    assert message.startswith("t.yaml:9: reward.weights: accuracy + format weights must sum to 1")


def test_all_errors_reported_at_once(write):
    text = MINIMAL.replace("numerical", "numericl").replace("version: 1", "version: 0")
    text += "colour: red\nbudget: {video: {fsp: 2}}\nprompt: {template: '{{ x '}\n"
    text = text.replace(
        'prompt:\n  template: "{{ question }}\\nPut the final answer in <answer></answer>."\n', ""
    )
    found = messages(write("t.yaml", text))
    assert [m.split(": ")[1] for m in found] == [
        "version", "problem_type", "colour", "budget.video.fsp", "prompt.template"
    ]  # fmt: skip


def test_duplicate_key_is_an_error(write):
    assert messages(write("t.yaml", MINIMAL + "id: other\n")) == ["t.yaml:9: id: duplicate key"]


def test_invalid_yaml_names_line(write):
    (message,) = messages(write("t.yaml", "id: [unclosed\nversion: 1\n"))
    assert message.startswith("t.yaml:") and "invalid YAML" in message


def test_python_tags_are_rejected(write):
    (message,) = messages(
        write("t.yaml", MINIMAL + "extra: !!python/object/apply:os.system ['true']\n")
    )
    assert "t.yaml:9" in message and "unsupported YAML tag" in message


def test_data_needs_exactly_one_source(write):
    text = MINIMAL.replace("  path: rows.jsonl\n", "")
    (message,) = messages(write("t.yaml", text))
    assert message == "t.yaml:4: data.path: give exactly one of data.path or data.hub"
