"""Verifier versions in specs: a left-out version is the newest (filled in by the loader, so the
resolved spec records it); a retired version is a spec error that says it was retired."""

from __future__ import annotations

from pathlib import Path

import pytest

from videorl_kit.core.verifiers import UnknownVerifierError, get_verifier
from videorl_kit.rewards.router import reward_function_from_spec
from videorl_kit.spec import SpecError, load_spec

from .specs import write_spec


def _spec(tmp_path: Path, verifier: str) -> Path:
    return write_spec(tmp_path, "count", "numerical", f"verifier: {verifier}\n", "3")


def test_a_left_out_version_is_the_newest_and_is_recorded(tmp_path: Path) -> None:
    spec = load_spec(_spec(tmp_path, "{name: numeric, params: {abs_tol: 1}}"))
    newest = get_verifier("numeric").version
    assert spec.verifier is not None and spec.verifier.version == newest
    assert spec.resolved_dict()["verifier"]["version"] == newest
    fn = reward_function_from_spec(spec)
    assert (fn.verifier_name, fn.verifier_version) == ("numeric", newest)
    assert fn("<answer>4</answer>", "3").accuracy == 1.0


def test_a_retired_version_is_a_spec_error_on_its_line(tmp_path: Path) -> None:
    path = _spec(tmp_path, "{name: numeric, version: 1}")
    with pytest.raises(SpecError) as info:
        load_spec(path)
    (issue,) = info.value.issues
    assert (Path(issue.file).name, issue.line, issue.path) == ("count.yaml", 5, "verifier.version")
    assert "retired" in issue.message and "available versions: 2" in issue.message


def test_wer_1_is_retired_since_answers_are_folded() -> None:
    assert get_verifier("wer").version == 2
    with pytest.raises(UnknownVerifierError, match="retired: issue 10 changed how answers"):
        get_verifier("wer", 1)
