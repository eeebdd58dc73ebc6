"""``videorl-kit reward check``: each broken rule of the contract is caught, with its shrunk
example as a case line that the kit's case files accept; a sound verifier passes (exit 0)."""

from __future__ import annotations

import importlib.util
import json
import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.testing.broken_verifiers import MODULE
from videorl_kit.cli import app
from videorl_kit.core.errors import UserError
from videorl_kit.rewards.router import reward_function_for
from videorl_kit.testing.cases import parse_case
from videorl_kit.testing.report import VerifierReport

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_reward_check.py"
#: (class, the property it breaks): one deliberately broken verifier per property.
BROKEN = [
    ("RaisesOnBlank", "never_raises"),
    ("AcceptsHedges", "hedges"),
    ("KeepsState", "deterministic"),
    ("SlowOnLongInput", "bounded_time"),
    ("HashOrdered", "cross_process"),
    ("HoldsALock", "picklable"),
    ("SharesAScratchpad", "thread_safe"),
]


def _check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["reward", "check", *args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        # a UserError: `videorl-kit` (cli.main) prints it as one `error: ...` line, exit 1
        assert isinstance(result.exception, UserError), result.output
        return 1, str(result.exception)
    return result.exit_code, result.output


def _table_row(output: str, prop: str) -> str:
    return next(line for line in output.splitlines() if line.startswith(f"│ {prop} "))


def _case_line(output: str) -> str:
    lines = output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  case line"))
    return lines[at + 1]


@pytest.mark.parametrize(("cls", "prop"), BROKEN, ids=[p for _, p in BROKEN])
def test_the_command_catches_a_verifier_that_breaks_one_rule(cls: str, prop: str) -> None:
    code, output = _check(f"{MODULE}:{cls}", "--property", prop, "--seed", "1", "--examples", "30")
    assert code == 1, output
    assert "BROKEN" in _table_row(output, prop)
    assert "reproduce: videorl-kit reward check broken_" in output and "--seed 1" in output
    if prop == "bounded_time":  # the shortest flood over the budget, as an expression
        count = int(output.split("input: 'a' * ")[1].split()[0])
        assert 20_000 < count < 200_000, output
    elif prop == "picklable":
        assert "cannot pickle '_thread.lock' object" in output
    else:
        case = parse_case(_case_line(output))  # a line the kit's case files accept
        assert case.problem_type == "numerical" and case.reason.startswith(f"reward check {prop}")
        assert len(case.response) < 60, case.response  # shrunk, not a megabyte of noise


def test_the_shrunk_examples_reproduce_the_failures() -> None:
    _, output = _check(f"{MODULE}:RaisesOnBlank", "--property", "never_raises", "--seed", "2")
    case = parse_case(_case_line(output))
    broken = reward_function_for("numerical", "broken_raises")
    assert broken(case.response, case.answer).status == "error"
    assert reward_function_for("numerical")(case.response, case.answer).status != "error"

    _, output = _check(f"{MODULE}:AcceptsHedges", "--property", "hedges", "--seed", "2")
    case = parse_case(_case_line(output))
    assert case.response == "<answer>0 or 17</answer>" and case.expected_accuracy == 0.0
    assert (
        reward_function_for("numerical", "broken_hedge")(case.response, case.answer).accuracy == 1
    )
    assert reward_function_for("numerical")(case.response, case.answer).accuracy == 0


#: The time budget in the kit's own tests: 4× the default, for a machine that runs the whole
#: suite and other jobs at once (benchmarks/bench_reward_check.py measures the real times).
CI_BUDGET_MS = "200"


def test_a_sound_verifier_passes_with_exit_0() -> None:
    props = ["never_raises", "bounded_time", "deterministic", "cross_process", "picklable",
             "thread_safe", "gold_forms", "unverifiable_gold"]  # fmt: skip
    args = [arg for p in props for arg in ("--property", p)]
    code, output = _check(
        "numeric@2", *args, "--examples", "20", "--seed", "0", "--time-budget-ms", CI_BUDGET_MS
    )
    assert code == 0, output
    for prop in props:
        assert "held" in _table_row(output, prop)
    assert "8 held, 0 broken, 0 skipped" in output


def test_json_report(tmp_path) -> None:
    cases = tmp_path / "boolean.jsonl"
    cases.write_text(
        '{"id": "b-1", "problem_type": "boolean", "response": "<answer>Yes</answer>", '
        '"answer": "yes", "expected_accuracy": 1.0, "reason": "a plain yes"}\n'
        '{"id": "b-2", "problem_type": "boolean", "response": "<answer>Yes</answer>", '
        '"answer": "no", "expected_accuracy": 1.0, "reason": "graded wrong on purpose"}\n'
    )
    code, output = _check(
        "boolean", "--cases", str(cases), "--property", "golden_cases", "--property",
        "gold_forms", "--json", "--examples", "10", "--seed", "5",
    )  # fmt: skip
    report = json.loads(output)
    assert code == 1 and report["ok"] is False and report["seed"] == 5
    golden = {p["name"]: p for p in report["properties"]}["golden_cases"]
    assert golden["status"] == "broken" and "1 of 2 cases" in golden["message"]
    assert "b-2" in golden["message"] and json.loads(golden["case_line"])["id"] == "b-2"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["numric"], "unknown verifier 'numric'; did you mean 'numeric'?"),
        (["numeric@9"], "verifier 'numeric' has no version 9"),
        (
            ["json:loads"],
            "json:loads is not a verifier: decorate its class with @register_verifier",
        ),
        (["nowhere.at.all:Thing"], "cannot import 'nowhere.at.all'"),
        (["numeric", "--problem-type", "ocr"], "does not handle problem type 'ocr'"),
        (["numeric", "--property", "speed"], "unknown property speed; choose from: never_raises"),
        (["numeric", "--params", '{"abs_tol": -1}'], "invalid params for verifier 'numeric'"),
        (["numeric", "--cases", "missing.jsonl"], "missing.jsonl: no such case file"),
    ],
)
def test_what_cannot_be_checked_is_one_error_line(args: list[str], message: str) -> None:
    code, output = _check(*args)
    assert code == 1 and message in output, output
    assert "\n" not in output


def test_the_reward_check_benchmark_runs(capsys) -> None:
    spec = importlib.util.spec_from_file_location("bench_reward_check", BENCHMARK)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # its dataclass looks its module up
    spec.loader.exec_module(bench)
    assert (
        bench.main(["--types", "numerical", "--examples", "2", "--budget-ms", "5000", "--json"])
        == 0
    )
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert (
        row["verifier"] == "numeric@2" and row["held"] + len(row["broken"]) + row["skipped"] == 12
    )
    assert row["slowest_long_input"].startswith("slowest: ")


@pytest.mark.parametrize(
    "verifier",
    ["numeric@2", "./my $(touch pwned).py:f", "a`id`b", "x'; rm -rf ~; '", "two\nlines"],
)
def test_the_reproduce_line_is_one_shell_command_whatever_the_names(verifier: str) -> None:
    """A verifier or problem-type name reaches the printed command as one quoted word each."""
    line = VerifierReport(verifier, "num erical", {}, 7, 50).reproduce("hedges")
    assert shlex.split(line) == [
        "videorl-kit", "reward", "check", verifier, "--problem-type", "num erical",
        "--seed", "7", "--examples", "50", "--property", "hedges",
    ]  # fmt: skip
