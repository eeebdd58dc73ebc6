"""Versioned verifier registry, lazy built-ins and entry-point plugins (real importlib.metadata)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from videorl_kit.core.problem_types import ProblemType
from videorl_kit.core.verifiers import (
    ENTRY_POINT_GROUP,
    NoParams,
    UnknownVerifierError,
    VerifierLoadError,
    VerifierParamsError,
    available_verifiers,
    default_verifier_name,
    get_verifier,
    register_verifier,
    verifier_infos,
)
from videorl_kit.rewards.base import VerifyOutcome

#: The built-in verifiers and their current versions (issue 10 bumped every verifier whose
#: reading of answers changed, issue 11 and issue 19 code_exec; wer kept its version).
CURRENT_VERSIONS = {
    "choice": 2,
    "numeric": 2,
    "mra": 2,
    "boolean": 2,
    "temporal_iou": 2,
    "box_iou": 2,
    "spatiotemporal_iou": 2,
    "tracking_iou": 2,
    "wer": 2,
    "rouge": 2,
    "math": 2,
    "code_exec": 3,
    "preference": 2,
}
BRIEF_NAMES = set(CURRENT_VERSIONS)


@pytest.mark.parametrize("ptype", list(ProblemType))
def test_every_problem_type_has_a_default_verifier_that_handles_it(ptype: ProblemType) -> None:
    name = default_verifier_name(ptype)
    info = get_verifier(name)  # no version: the newest
    assert ptype in info.problem_types and info.description
    assert info.version == CURRENT_VERSIONS.get(name, info.version)
    assert info.params_model.model_config.get("extra") == "forbid"


def test_default_verifier_name_accepts_aliases() -> None:
    assert default_verifier_name("multiple choice") == "choice"
    assert default_verifier_name("spatial-temporal grounding") == "spatiotemporal_iou"
    assert default_verifier_name("llava") == "preference"


def test_available_verifiers_lists_the_built_ins() -> None:
    available = available_verifiers()
    assert set(available) >= BRIEF_NAMES
    assert all(available[name] == [CURRENT_VERSIONS[name]] for name in BRIEF_NAMES)
    assert "numeric" in available
    assert {i.name for i in verifier_infos()} >= BRIEF_NAMES


def test_unknown_name_suggests_close_names() -> None:
    with pytest.raises(UnknownVerifierError, match="did you mean 'numeric'"):
        get_verifier("numric")


def test_unknown_version_lists_the_versions() -> None:
    with pytest.raises(UnknownVerifierError, match="available versions: 2"):
        get_verifier("numeric", version=7)


def test_a_retired_version_says_it_was_retired_and_where_to_read_why() -> None:
    with pytest.raises(UnknownVerifierError) as info:
        get_verifier("choice", version=1)
    message = str(info.value)
    assert "has no version 1 (retired: issue 10" in message
    assert "docs/verifiers.md" in message and "available versions: 2" in message


def test_params_are_validated_strictly() -> None:
    info = get_verifier("numeric", 2)
    assert info.validate_params({"abs_tol": 0.5}).abs_tol == 0.5
    with pytest.raises(VerifierParamsError, match="abs_tl"):
        info.validate_params({"abs_tl": 0.5})
    with pytest.raises(VerifierParamsError, match="abs_tol"):
        info.validate_params({"abs_tol": -1})


def test_registering_a_different_class_under_a_taken_name_fails() -> None:
    with pytest.raises(ValueError, match="already registered"):

        @register_verifier(name="choice", version=2, problem_types=["multiple_choice"])
        class Impostor:
            def __init__(self, params: NoParams) -> None:
                self.params = params


def test_a_retired_built_in_version_cannot_be_registered_again() -> None:
    with pytest.raises(ValueError, match="retired"):

        @register_verifier(name="numeric", version=1, problem_types=["numerical"])
        class Revenant:
            def __init__(self, params: NoParams) -> None:
                self.params = params


def test_decorator_rejects_bad_metadata() -> None:
    with pytest.raises(ValueError, match="version"):
        register_verifier(name="x_bad", version=0, problem_types=["ocr"])
    with pytest.raises(ValueError, match="unknown problem type"):
        register_verifier(name="x_bad", version=1, problem_types=["poetry"])


def test_registered_verifier_gets_a_new_version_alongside_the_old() -> None:
    class P(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)
        bonus: float = 0.0

    for version in (1, 2):

        @register_verifier(
            name="test_versions", version=version, problem_types=["ocr"], params_model=P
        )
        class V:
            """Versioned test verifier."""

            def __init__(self, params: P, _v: int = version) -> None:
                self.params = params

            def score(self, answer_text, gold, options=None):
                return VerifyOutcome.ok(1.0)

    assert get_verifier("test_versions").version == 2
    assert get_verifier("test_versions", 1).version == 1


def _write_plugin(root: Path, dist: str, module: str, body: str, entry: str) -> None:
    (root / f"{module}.py").write_text(textwrap.dedent(body), encoding="utf-8")
    info = root / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{entry}\n", encoding="utf-8")


PLUGIN = """
    from videorl_kit.core.verifiers import NoParams
    from videorl_kit.rewards.base import VerifyOutcome
    from videorl_kit.core.verifiers import register_verifier


    @register_verifier(name="plugin_length", version=3, problem_types=["open_ended"])
    class LengthVerifier:
        '''1 when the answer has as many characters as the gold (test plugin).'''

        def __init__(self, params: NoParams) -> None:
            self.params = params

        def score(self, answer_text, gold, options=None):
            return VerifyOutcome.ok(1.0 if len(answer_text) == len(gold) else 0.0)
"""


def test_entry_point_plugin_loads_lazily_through_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_plugin(
        tmp_path,
        "vk_plugin_demo",
        "vk_plugin_length",
        PLUGIN,
        "plugin_length = vk_plugin_length:LengthVerifier",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "vk_plugin_length" not in sys.modules  # nothing imported before it is asked for
    info = get_verifier("plugin_length")
    assert "vk_plugin_length" in sys.modules
    assert (info.name, info.version) == ("plugin_length", 3)
    assert info.description.startswith("1 when the answer has as many characters")
    assert info.create().score("abc", "xyz").accuracy == 1.0

    from videorl_kit.rewards.router import reward_function_for

    fn = reward_function_for("open_ended", verifier=("plugin_length", 3, {}))
    assert fn("<answer>abcd</answer>", "wxyz").overall == 1.0
    assert available_verifiers()["plugin_length"] == [3]


def test_broken_entry_point_reports_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write_plugin(
        tmp_path,
        "vk_plugin_broken",
        "vk_plugin_broken_mod",
        "raise RuntimeError('plugin exploded')\n",
        "plugin_broken = vk_plugin_broken_mod:Nothing",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(VerifierLoadError, match="plugin exploded"):
        get_verifier("plugin_broken")


def test_unknown_name_suggestions_include_entry_point_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_plugin(
        tmp_path,
        "vk_plugin_suggest",
        "vk_plugin_suggest_mod",
        "X = 1\n",
        "plugin_suggestable = vk_plugin_suggest_mod:X",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UnknownVerifierError, match="plugin_suggestable"):
        get_verifier("plugin_suggestabel")
