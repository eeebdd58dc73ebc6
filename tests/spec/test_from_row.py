"""problem_type: from_row, the per-type ``verifiers`` map and ``data.where``: validation."""

from __future__ import annotations

import pytest

from tests.spec.conftest import MINIMAL
from videorl_kit.core.problem_types import ProblemType
from videorl_kit.spec import SpecError, load_spec

FROM_ROW = MINIMAL.replace("problem_type: numerical", "problem_type: from_row")


def messages(path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return [str(issue) for issue in info.value.issues]


def test_from_row_spec_has_no_single_verifier_and_canonical_map_keys(write):
    spec = load_spec(
        write(
            "t.yaml",
            FROM_ROW
            + "verifiers:\n"
            + "  number: {name: numeric, version: 2, params: {abs_tol: 0.5}}\n"
            + "  multiple choice: {name: choice}\n",
        )
    )
    assert spec.problem_type == "from_row" and spec.routes_per_row
    assert spec.verifier is None
    assert list(spec.verifiers) == [ProblemType.NUMERICAL, ProblemType.MULTIPLE_CHOICE]
    assert spec.verifiers[ProblemType.NUMERICAL].params == {"abs_tol": 0.5}
    assert spec.resolved_dict()["problem_type"] == "from_row"


def test_unknown_problem_type_key_points_at_its_line(write):
    path = write(
        "t.yaml",
        FROM_ROW + "verifiers:\n  numerical: {name: numeric}\n  numercal: {name: numeric}\n",
    )
    (message,) = messages(path)
    assert message.startswith("t.yaml:11: verifiers.numercal: unknown problem type 'numercal'")
    assert "did you mean 'numerical'" in message


def test_verifier_must_fit_its_problem_type_and_params_are_checked(write):
    path = write(
        "t.yaml",
        FROM_ROW
        + "verifiers:\n"
        + "  ocr: {name: numeric}\n"
        + "  numerical: {name: numeric, params: {abs_tl: 1}}\n"
        + "  boolean: {name: bolean}\n",
    )
    found = messages(path)
    assert found[0] == (
        "t.yaml:10: verifiers.ocr.name: verifier 'numeric' does not score 'ocr' (it scores: "
        "numerical, regression)"
    )
    assert found[1].startswith(
        "t.yaml:11: verifiers.numerical.params.abs_tl: unknown parameter 'abs_tl' for verifier "
        "'numeric'; did you mean 'abs_tol'?"
    )
    assert found[2].startswith("t.yaml:12: verifiers.boolean.name: unknown verifier 'bolean'")
    assert len(found) == 3


def test_two_aliases_of_one_type_are_an_error(write):
    path = write(
        "t.yaml",
        FROM_ROW + "verifiers:\n  mcq: {name: choice}\n  multiple choice: {name: choice}\n",
    )
    (message,) = messages(path)
    assert "'multiple choice' and 'mcq' both name problem type 'multiple_choice'" in message


def test_verifier_with_from_row_and_verifiers_with_one_type_are_errors(write):
    (message,) = messages(write("a.yaml", FROM_ROW + "verifier: {name: numeric}\n"))
    assert message.startswith("a.yaml:9: verifier: with problem_type from_row, give the verifier")
    (message,) = messages(write("b.yaml", MINIMAL + "verifiers:\n  numerical: {name: numeric}\n"))
    assert message.startswith(
        "b.yaml:9: verifiers: a map of verifiers needs problem_type: from_row"
    )


def test_unknown_problem_type_suggests_from_row(write):
    (message,) = messages(write("t.yaml", MINIMAL.replace("numerical", "from_rows")))
    assert message.startswith("t.yaml:3: problem_type: unknown problem type 'from_rows'")
    assert "did you mean 'from_row'" in message and "or from_row)" in message


def test_where_problem_types_must_be_known(write):
    path = write(
        "t.yaml",
        FROM_ROW.replace(
            "  media_root: media\n",
            "  media_root: media\n  where: {problem_type: [mcq, numerica], data_type: video}\n",
        ),
    )
    (message,) = messages(path)
    assert message.startswith("t.yaml:7: data.where: problem_type: unknown problem type")
    assert "'numerica'" in message


def test_where_needs_a_value(write):
    path = write(
        "t.yaml",
        MINIMAL.replace("  media_root: media\n", "  media_root: media\n  where: {source: []}\n"),
    )
    (message,) = messages(path)
    assert "where: source: give a value or a non-empty list of values" in message
