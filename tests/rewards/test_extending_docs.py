"""docs/extending.md's worked example runs as written: a problem type added as three files.

The three files of the guide (verifier module, case file, registration in
``rewards/registry.py``, none in ``core/``) are applied to a copy of the kit; the golden and
registry tests, the module's examples and ``reward score`` then run there, in a process of
their own, with no other change.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.rewards.known_failing import broken_properties

REPO = Path(__file__).resolve().parents[2]
SECTION = (
    (REPO / "docs" / "extending.md")
    .read_text(encoding="utf-8")
    .split("## Adding a problem type", 1)[1]
)


def _block(pattern: str) -> tuple[str, str]:
    match = re.search(pattern, SECTION, re.S)
    assert match, f"docs/extending.md lost a part of its worked example ({pattern})"
    return match.group(1), match.group(2)


MODULE = _block(r"Save it as `(videorl_kit/rewards/\w+\.py)`:\s+```python\n(.*?)```")
CASES = _block(r"Save the cases as `(tests/rewards/golden/\w+\.jsonl)`.*?```jsonl\n(.*?)```")
REGISTRATION = _block(r"Register it in `(videorl_kit/rewards/registry\.py)`.*?```diff\n(.*?)```")
COMMAND = _block(r"\$ cat (\w+\.jsonl)\n(.*?)\n\$ videorl-kit reward score")
CHECK = re.search(r"\$ videorl-kit (reward check [^\n]+)\n```", SECTION)
FIXTURE = re.search(r"```python\n(def test_\w+\(verifier_contract\):\n.*?)```", SECTION, re.S)
#: What `reward check` finds broken in the worked example on main (tests/rewards/known_failing.py).
BROKEN_ON_MAIN = broken_properties("event_order")


def apply_additions(text: str, diff: str) -> str:
    """``text`` with the ``+`` lines of each hunk of ``diff`` inserted after the context line
    that precedes them (which must occur exactly once)."""
    lines = text.split("\n")
    for hunk in re.split(r"^@@[^\n]*\n", diff, flags=re.M)[1:]:
        body = hunk.rstrip("\n").split("\n")
        first_added = next(i for i, line in enumerate(body) if line.startswith("+"))
        anchor = body[first_added - 1][1:]
        added = [line[1:] for line in body[first_added:] if line.startswith("+")]
        assert lines.count(anchor) == 1, f"context line {anchor!r} is not unique in the file"
        at = lines.index(anchor) + 1
        lines[at:at] = added
    return "\n".join(lines)


@pytest.fixture(scope="module")
def kit_with_the_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the kit (package, reward tests, pyproject) with the guide's three files."""
    root = tmp_path_factory.mktemp("kit")
    skip = shutil.ignore_patterns("__pycache__", "adapters")
    shutil.copytree(REPO / "videorl_kit", root / "videorl_kit", ignore=skip)
    shutil.copytree(REPO / "tests" / "rewards", root / "tests" / "rewards", ignore=skip)
    for name in ("tests/__init__.py", "tests/conftest.py", "pyproject.toml"):
        shutil.copy(REPO / name, root / name)
    (root / MODULE[0]).write_text(MODULE[1], encoding="utf-8")
    (root / CASES[0]).write_text(CASES[1], encoding="utf-8")
    registration = root / REGISTRATION[0]
    registration.write_text(
        apply_additions(registration.read_text(encoding="utf-8"), REGISTRATION[1]),
        encoding="utf-8",
    )
    return root


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin", "HOME": str(root)}
    return subprocess.run(
        [sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=600
    )


def test_the_worked_example_ends_with_reward_check() -> None:
    assert CHECK and FIXTURE, "docs/extending.md lost its reward check step"
    assert SECTION.index(CHECK.group(0)) > SECTION.index("$ videorl-kit reward score")
    after = SECTION[SECTION.index(FIXTURE.group(0)) :].split("\n\n", 2)
    assert len(after) < 3 or not after[2].lstrip().startswith("```"), "reward check is the end"


def test_the_guide_adds_a_problem_type_with_three_files() -> None:
    written = {MODULE[0], CASES[0], REGISTRATION[0]}
    assert len(written) == 3
    assert not any(path.startswith("videorl_kit/core/") for path in written)  # the mechanism
    assert set(re.findall(r"^[+-]{3} [ab]/(\S+)", REGISTRATION[1], re.M)) == {REGISTRATION[0]}
    assert len([line for line in CASES[1].splitlines() if line.strip()]) >= 20


def test_the_golden_and_registry_tests_pass_with_the_new_type(kit_with_the_example: Path) -> None:
    result = _run(
        kit_with_the_example, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
        "tests/rewards/test_golden.py", "tests/rewards/test_registry.py", MODULE[0],
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    passed = [line for line in result.stdout.splitlines() if line.startswith("PASSED")]
    n_cases = len([line for line in CASES[1].splitlines() if line.strip()])
    assert len([line for line in passed if "[ordering/" in line]) == n_cases
    assert any("default_verifier_that_handles_it[ordering]" in line for line in passed)
    assert any(MODULE[0] in line for line in passed)  # the module's examples


def test_reward_score_reads_the_new_type_as_the_guide_shows(kit_with_the_example: Path) -> None:
    lines = kit_with_the_example / COMMAND[0]
    lines.write_text(COMMAND[1] + "\n", encoding="utf-8")
    result = _run(
        kit_with_the_example, "-m", "videorl_kit", "reward", "score", str(lines), "--json"
    )
    assert result.returncode == 0, result.stderr
    scored = json.loads(result.stdout.splitlines()[0])
    assert scored["status"] == "ok" and scored["details"]["verifier"] == "event_order@1"
    assert (scored["accuracy"], scored["format"], scored["overall"]) == pytest.approx(
        (2 / 3, 1.0, 0.7)
    )


def test_reward_check_runs_on_the_new_type_as_the_guide_shows(kit_with_the_example: Path) -> None:
    # 4x the default time budget: this machine runs the whole suite and other jobs at once
    extra = ["--json", "--seed", "0", "--examples", "30", "--time-budget-ms", "200"]
    args = CHECK.group(1).split() + extra
    result = _run(kit_with_the_example, "-m", "videorl_kit", *args)
    report = json.loads(result.stdout)
    assert report["verifier"] == "event_order@1" and report["problem_type"] == "ordering"
    status = {p["name"]: p["status"] for p in report["properties"]}
    assert "skipped" not in status.values(), status  # golds, forms, wrong answers: the cases
    broken = {name for name, s in status.items() if s == "broken"}
    assert broken == BROKEN_ON_MAIN, [
        (p["name"], p["message"]) for p in report["properties"] if p["status"] == "broken"
    ]
    assert result.returncode == (1 if broken else 0), result.stderr


def test_the_fixture_in_the_guide_runs_one_test_per_property(kit_with_the_example: Path) -> None:
    test_file = kit_with_the_example / "tests" / "test_event_order_contract.py"
    test_file.write_text(FIXTURE.group(1), encoding="utf-8")
    result = _run(
        kit_with_the_example,
        "-m",
        "pytest",
        "-q",
        "-rA",
        "-p",
        "no:cacheprovider",
        "--verifier-seed",
        "0",
        "--verifier-examples",
        "30",
        "--verifier-time-budget-ms",
        "200",
        str(test_file),
    )  # fmt: skip  (the fixture comes from the kit's pytest11 entry point)
    outcomes = {
        line.split("[", 1)[1].split("]", 1)[0]: line.split(" ", 1)[0]
        for line in result.stdout.splitlines()
        if line.startswith(("PASSED", "FAILED")) and "[" in line
    }
    assert len(outcomes) == 12, result.stdout[-3000:] + result.stderr[-3000:]
    failed = {name for name, outcome in outcomes.items() if outcome == "FAILED"}
    assert failed == BROKEN_ON_MAIN, result.stdout[-3000:]
    assert ("case line: {" in result.stdout) == bool(failed)  # the shrunk example, to paste
