"""The ``code_exec`` verifier: run the answer's Python against the ground truth's tests.

Ground truth (a JSON object, or a JSON string of one)::

    {"entry_point": "f", "tests": ["assert f(2) == 4", "assert f(0) == 0"]}

The answer scores 1 when the code defines ``entry_point`` and every test passes, else 0. The
verdict is never decided where the code runs, and the code never sees a test. A test of callable
form (``assert f(2) == 4``, ``assert abs(f(x) - 1.5) < 1e-6``, ``assert f(3) in (1, 2)``)
becomes calls that the code's isolated process makes, and the host checks the assertion on the
plain data that comes back (:mod:`videorl_kit.rewards.code_tests`; ``judged_by:
returned_values``). Every other test (a loop over cases, HumanEval's ``def check(candidate):
...``, unittest classes) runs in an isolated process of its own, against a proxy of the code
whose calls go to the code's process and return plain data, checked on the host first
(:mod:`videorl_kit.rewards.sandbox_proxy`; ``judged_by: test_process``). A test that cannot run
that way (it passes a function to the code, reads its attributes or files, could run returned
data as code: :mod:`videorl_kit.rewards.code_forms`) makes the ground truth ``unverifiable``
with one line that says why, unless the params opt in to ``shared_interpreter: true`` (such
tests then run after the code in its own interpreter, judged by completion: the code can forge
that verdict; ``judged_by: shared_interpreter``). ``script_tests: false`` makes any ground truth
with tests that are not calls unverifiable.

Both processes run under bubblewrap with namespaces, a seccomp filter and resource limits
(:mod:`videorl_kit.rewards.sandbox`). Where that isolation cannot run, building the verifier
raises :class:`~videorl_kit.core.errors.UserError` (one line) unless the params opt in to
``isolation: subprocess``. Every result records the isolation and how its tests were judged in
``details["sandbox"]``.

An unreadable ground truth (not JSON, no tests, a test that does not compile or fails for every
answer, tests that never call the code) is ``unverifiable``; so is a sandbox that cannot start
at all (a host problem, reported with the reason rather than hidden as a 0).

Code is taken from the extracted answer: the fenced blocks (three backticks, tagged ``python``,
``py``, ``python3`` or untagged; an unterminated fence runs to the end) joined with blank lines,
else the whole text. The code runs with ``__name__ == "solution"``, so demo code under
``if __name__ == "__main__":`` is not executed.

Example:
    >>> verifier = CodeExecVerifier(CodeExecParams(timeout_s=5))
    >>> gold = '{"entry_point": "double", "tests": ["assert double(2) == 4"]}'
    >>> verifier.score("```python\\ndef double(x):\\n    return x * 2\\n```", gold).accuracy
    1.0
    >>> verifier.score("def double(x):\\n    return x + 3", gold).accuracy
    0.0
    >>> verifier.score("def double(x): return 2 * x", "not json").status
    'unverifiable'
"""

from __future__ import annotations

import json
import keyword
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from videorl_kit.core.errors import UserError, VideoRLKitError
from videorl_kit.core.verifiers import register_verifier
from videorl_kit.rewards.base import VerifyOutcome
from videorl_kit.rewards.code_forms import OPT_IN, REFUSED_MODULES, ScriptPlan, plan_script
from videorl_kit.rewards.code_tests import (
    CodeTestPlan,
    CodeTestVerdict,
    PlanError,
    bound_names,
    judge_call_tests,
    plan_tests,
)
from videorl_kit.rewards.sandbox import (
    ChildReport,
    SandboxLimits,
    isolation_problem,
    run_calls,
    run_script,
)
from videorl_kit.rewards.sandbox_proxy import ProxyReport, run_proxied

#: Longest code (characters) that is executed; longer answers score 0.
MAX_CODE_CHARS = 200_000
#: Most tests one ground truth may carry.
MAX_TESTS = 200

_PYTHON_FENCE_TAGS = frozenset({"", "python", "py", "python3", "py3"})


class CodeExecParams(BaseModel):
    """Parameters of ``code_exec``: sandbox limits and isolation per answer.

    Example:
        >>> CodeExecParams(timeout_s=2).isolation
        'bubblewrap'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float = Field(5.0, gt=0, le=120, description="wall-clock limit per child process")
    memory_mb: int = Field(512, ge=64, le=65536, description="address-space limit (RLIMIT_AS)")
    max_output_bytes: int = Field(
        2048, ge=0, le=1 << 20, description="stdout/stderr kept in details"
    )
    isolation: Literal["bubblewrap", "subprocess"] = Field(
        "bubblewrap",
        description="bubblewrap: namespaces + seccomp (refused where unavailable); "
        "subprocess: explicit opt-in to a plain child process with the host user's rights",
    )
    call_timeout_s: float | None = Field(
        None,
        gt=0,
        le=120,
        description="wall-clock limit of one call of the code made by a test that runs in the "
        "tests' process (default: timeout_s, which also bounds the whole run)",
    )
    script_tests: bool = Field(
        True,
        description="run tests that are not plain calls in a process of their own against a "
        "proxy of the code; false: such a ground truth is unverifiable",
    )
    shared_interpreter: bool = Field(
        False,
        description="opt in: tests that cannot run against a proxy (they pass functions or "
        "objects to the code, read its attributes or files, or could run returned data as "
        "code) run after the code in its own interpreter, judged by completion (the code can "
        "forge that verdict); false: such a ground truth is unverifiable",
    )


class GoldError(VideoRLKitError, ValueError):
    """The code ground truth cannot be read (the message says why)."""


class CodeGold(NamedTuple):
    """A code ground truth: the entry point, its tests, and whether the entry point is a class
    the tests construct (``"entry_point_kind": "class"``; a function by default, whose calls
    must return plain data)."""

    entry_point: str
    tests: list[str]
    is_class: bool = False


def parse_code_gold(gold: Any) -> CodeGold:
    """Read a code ground truth (:class:`CodeGold`); raises :class:`GoldError`.

    Example:
        >>> parse_code_gold('{"entry_point": "f", "tests": ["assert f(1) == 1"]}')
        CodeGold(entry_point='f', tests=['assert f(1) == 1'], is_class=False)
        >>> parse_code_gold('{"entry_point": "f"}')
        Traceback (most recent call last):
        ...
        videorl_kit.rewards.code.GoldError: ground truth has no "tests" list
    """
    data = gold
    if isinstance(gold, str):
        try:
            data = json.loads(gold)
        except ValueError:
            raise GoldError("ground truth is not JSON") from None
        if isinstance(data, str):  # a JSON string holding the JSON object
            try:
                data = json.loads(data)
            except ValueError:
                raise GoldError("ground truth is a JSON string that is not a JSON object") from None
    if not isinstance(data, dict):
        raise GoldError("ground truth is not a JSON object")
    entry_point = data.get("entry_point")
    if not isinstance(entry_point, str) or not entry_point.isidentifier():
        raise GoldError('ground truth "entry_point" is not a Python identifier')
    if keyword.iskeyword(entry_point):
        raise GoldError(f'ground truth "entry_point" is a keyword: {entry_point!r}')
    kind = data.get("entry_point_kind", "function")
    if kind not in ("function", "class"):
        raise GoldError('ground truth "entry_point_kind" is neither "function" nor "class"')
    tests = data.get("tests")
    if not isinstance(tests, list) or not tests:
        raise GoldError('ground truth has no "tests" list')
    if len(tests) > MAX_TESTS:
        raise GoldError(f"ground truth has {len(tests)} tests (at most {MAX_TESTS})")
    for index, test in enumerate(tests):
        if not isinstance(test, str) or not test.strip():
            raise GoldError(f"ground truth test {index} is not a non-empty string")
        try:
            compile(test, f"<test {index}>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            raise GoldError(f"ground truth test {index} does not compile: {exc}") from None
    return CodeGold(entry_point, list(tests), kind == "class")


def extract_code(text: str) -> str:
    """The Python code in ``text``: fenced Python/untagged blocks joined, else the text itself.

    Blocks in other languages (``bash``, ``json``, ...) are ignored; if only such blocks exist,
    there is no Python code and the result is ``""``.

    Example:
        >>> extract_code("Here:\\n```python\\ndef f():\\n    return 1\\n```\\nDone.")
        'def f():\\n    return 1'
        >>> extract_code("def g(): return 2")
        'def g(): return 2'
        >>> extract_code("```bash\\nls\\n```")
        ''
    """
    blocks: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    language = ""
    for line in text.split("\n"):
        stripped = line.strip()
        if current is None:
            if stripped.startswith("```"):
                language = stripped[3:].strip().lower()
                current = []
        elif stripped.startswith("```") and not stripped.strip("`"):
            blocks.append((language, current))
            current = None
        else:
            current.append(line)
    if current is not None:  # unterminated fence (truncated response): take the rest
        blocks.append((language, current))
    if not blocks:
        return text.strip()
    python = ["\n".join(body) for tag, body in blocks if tag in _PYTHON_FENCE_TAGS]
    return "\n\n".join(python).strip()


@register_verifier(
    name="code_exec",
    version=3,
    problem_types=("code",),
    params_model=CodeExecParams,
    raw_text=True,  # a full-width string literal is part of the program
)
class CodeExecVerifier:
    """Runs the answer's Python in an isolated child; the host decides every test (1 or 0)."""

    def __init__(self, params: CodeExecParams) -> None:
        if params.isolation == "bubblewrap" and (problem := isolation_problem("bubblewrap")):
            raise UserError(
                f"code_exec: cannot isolate model-written code here: {problem}; fix that, or "
                "set the verifier param `isolation: subprocess` to accept the weaker mode "
                "(docs/verifiers.md)"
            )
        self.params = params

    def _limits(self) -> SandboxLimits:
        return SandboxLimits(
            timeout_s=self.params.timeout_s,
            memory_mb=self.params.memory_mb,
            max_output_bytes=self.params.max_output_bytes,
        )

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        """1.0 when every test passes; 0 otherwise; ``unverifiable`` for a bad ground truth.

        Example:
            >>> v = CodeExecVerifier(CodeExecParams())
            >>> gold = '{"entry_point": "f", "tests": ["assert f(1) == -1"]}'
            >>> outcome = v.score("def f(x): return -x", gold)
            >>> outcome.accuracy, outcome.details["sandbox"]["judged_by"]["returned_values"]
            (1.0, 1)
        """
        try:
            entry_point, tests, is_class = parse_code_gold(gold)
            plan = plan_tests(entry_point, tests)
        except (GoldError, PlanError) as exc:
            return VerifyOutcome.unverifiable(str(exc))
        if not plan.calls and not plan.script_tests:
            return VerifyOutcome.unverifiable(
                f"no test calls {entry_point}: every answer would pass them"
            )
        if plan.script_tests and not self.params.script_tests:
            return VerifyOutcome.unverifiable(
                f"test {plan.script_tests[0]} is not a call of {entry_point} and script_tests "
                "is off"
            )
        code = extract_code(answer_text if isinstance(answer_text, str) else "")
        if not code:
            return VerifyOutcome.wrong("no Python code in the answer", entry_point=entry_point)
        if len(code) > MAX_CODE_CHARS:
            return VerifyOutcome.wrong(
                f"code longer than {MAX_CODE_CHARS} characters", code_chars=len(code)
            )
        return self._judge(code, plan, is_class)

    def _judge(self, code: str, plan: CodeTestPlan, is_class: bool = False) -> VerifyOutcome:
        """Run the calls, and the other tests against a proxy of the code; decide on the host.
        ``is_class``: the entry point is a class the tests construct (its objects may cross)."""
        options = {"limits": self._limits(), "isolation": self.params.isolation}
        calls = [(call.args, call.kwargs) for call in plan.calls]
        if not plan.script_tests:
            report = run_calls(code, plan.entry_point, calls, **options)
            verdicts = judge_call_tests(plan, report.results) if report.status == "ran" else []
            return _outcome(plan, [report], verdicts, "test_process")
        script = plan_script(plan.entry_point, [(i, plan.sources[i]) for i in plan.script_tests])
        refusal = script.refusal
        if not refusal:
            proxied = run_proxied(
                code,
                plan.entry_point,
                calls,
                script.sources,
                call_timeout_s=self.params.call_timeout_s,
                refused_modules=sorted(REFUSED_MODULES),
                test_names=sorted(bound_names(plan.sources, plan.entry_point)),
                entry_point_objects=is_class,
                **options,
            )
            if proxied.status == "ran" and proxied.verdict == "refused":
                refusal = proxied.message
            elif _never_called(plan, proxied):
                return VerifyOutcome.unverifiable(
                    "the tests never call the code: every answer would pass them",
                    sandbox={**proxied.to_details(), "status": "no_calls"},
                )
            else:
                verdicts = []
                if proxied.status == "ran" and len(proxied.results) == len(plan.calls):
                    verdicts = judge_call_tests(plan, proxied.results)
                    verdicts += _proxy_verdicts(plan, script, proxied)
                return _outcome(plan, [proxied], verdicts, "test_process")
        if not self.params.shared_interpreter:
            return VerifyOutcome.unverifiable(
                f"{refusal}; {OPT_IN}", entry_point=plan.entry_point, refused=refusal
            )
        return self._judge_shared(code, plan, script, options)

    def _judge_shared(
        self, code: str, plan: CodeTestPlan, script: ScriptPlan, options: dict[str, Any]
    ) -> VerifyOutcome:
        """The opted-in weaker mode: script tests after the code, in its own interpreter."""
        verdicts: list[CodeTestVerdict] = []
        reports: list[ChildReport] = []
        if plan.call_tests:
            calls = [(call.args, call.kwargs) for call in plan.calls]
            reports.append(run_calls(code, plan.entry_point, calls, **options))
            if reports[-1].status == "ran":
                verdicts = judge_call_tests(plan, reports[-1].results)
        if not reports or _all_passed(reports[-1], verdicts):
            reports.append(run_script(code, plan.entry_point, list(script.sources), **options))
            verdicts += _script_verdicts(plan, script, reports[-1])
        return _outcome(plan, reports, verdicts, "shared_interpreter")


def _never_called(plan: CodeTestPlan, report: ProxyReport) -> bool:
    """Whether the tests passed without ever reaching the code (so every answer would)."""
    return report.verdict == "passed" and report.calls == 0 and not plan.calls


def _outcome(
    plan: CodeTestPlan,
    reports: list[ChildReport] | list[ProxyReport],
    verdicts: list[CodeTestVerdict],
    script_mode: str,
) -> VerifyOutcome:
    """Score 1 only when every run reported and every test passed; say why otherwise."""
    failed_run = next((r for r in reports if r.status != "ran"), None)
    first_failure = next((v for v in verdicts if not v.passed), None)
    last = failed_run or reports[-1]
    passed = failed_run is None and first_failure is None and len(verdicts) == len(plan.sources)
    status = "passed" if passed else (failed_run.status if failed_run else "failed")
    message = first_failure.message if first_failure and not failed_run else last.message
    judged_by = {"returned_values": 0, "test_process": 0, "shared_interpreter": 0}
    judged_by["returned_values"] = len(plan.call_tests)
    judged_by[script_mode] = len(plan.script_tests)
    sandbox: dict[str, Any] = {
        **last.to_details(),
        "status": status,
        "message": message,
        "tests_total": len(plan.sources),
        "tests_passed": sum(v.passed for v in verdicts),
        "judged_by": judged_by,
        "duration_s": round(sum(r.duration_s for r in reports), 4),
    }
    if failed_run is not None and failed_run.status == "sandbox_error":
        return VerifyOutcome.unverifiable(
            f"the sandbox could not run: {failed_run.message}", sandbox=sandbox
        )
    if passed:
        return VerifyOutcome.ok(1.0, entry_point=plan.entry_point, sandbox=sandbox)
    reason = _REASONS.get(sandbox["status"], "a test failed")
    return VerifyOutcome.wrong(reason, entry_point=plan.entry_point, sandbox=sandbox)


_REASONS = {
    "syntax_error": "code does not compile",
    "error": "code raised before the tests ran",
    "missing_entry_point": "code does not define the entry point",
    "timeout": "time limit reached",
    "crashed": "the process died before reporting",
    "invalid_report": "the process's report is not well formed",
}


def _all_passed(report: ChildReport, verdicts: list[CodeTestVerdict]) -> bool:
    return report.status == "ran" and all(v.passed for v in verdicts)


def _proxy_verdicts(
    plan: CodeTestPlan, script: ScriptPlan, report: ProxyReport
) -> list[CodeTestVerdict]:
    """One verdict per script test from the tests' process: all pass together, or none does."""
    passed = report.status == "ran" and report.verdict == "passed"
    message = report.message
    if not passed and report.failed_test is not None and report.failed_test < len(script.indices):
        message = f"test {script.indices[report.failed_test]}: {report.message}"
    return [
        CodeTestVerdict(i, passed, "test_process", "" if passed else message)
        for i in plan.script_tests
    ]


def _script_verdicts(
    plan: CodeTestPlan, script: ScriptPlan, report: ChildReport
) -> list[CodeTestVerdict]:
    """One verdict per script test of the shared mode: all pass together, or none does."""
    message = ""
    if report.status == "ran" and not report.script_passed:
        failed = report.failed_test or 0  # the child's word: only used in the message
        index = script.indices[failed] if failed < len(script.indices) else failed
        message = f"test {index}: {report.message}"
    passed = report.status == "ran" and report.script_passed
    return [CodeTestVerdict(i, passed, "shared_interpreter", message) for i in plan.script_tests]
