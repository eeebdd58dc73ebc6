"""The ``code_exec`` verifier: run the answer's Python against the ground truth's tests.

Ground truth (a JSON object, or a JSON string of one)::

    {"entry_point": "f", "tests": ["assert f(2) == 4", "assert f(0) == 0"]}

The answer scores 1 when the code defines ``entry_point`` and every test passes in the sandbox
(:mod:`videorl_kit.rewards.sandbox`), else 0. An unreadable ground truth (not JSON, no tests, a
test that does not compile) is ``unverifiable``. So is a sandbox that cannot start at all (a host
problem, reported with the reason rather than hidden as a 0).

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
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from videorl_kit.errors import VideoRLKitError
from videorl_kit.rewards.base import VerifyOutcome
from videorl_kit.rewards.registry import register_verifier
from videorl_kit.rewards.sandbox import SandboxLimits, run_python_tests

#: Longest code (characters) that is executed; longer answers score 0.
MAX_CODE_CHARS = 200_000
#: Most tests one ground truth may carry.
MAX_TESTS = 200

_PYTHON_FENCE_TAGS = frozenset({"", "python", "py", "python3", "py3"})


class CodeExecParams(BaseModel):
    """Parameters of ``code_exec``: sandbox limits per answer.

    Example:
        >>> CodeExecParams(timeout_s=2).memory_mb
        512
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float = Field(5.0, gt=0, le=120, description="wall-clock limit per answer")
    memory_mb: int = Field(512, ge=64, le=65536, description="address-space limit (RLIMIT_AS)")
    max_output_bytes: int = Field(
        2048, ge=0, le=1 << 20, description="stdout/stderr kept in details"
    )


class GoldError(VideoRLKitError, ValueError):
    """The code ground truth cannot be read (the message says why)."""


def parse_code_gold(gold: Any) -> tuple[str, list[str]]:
    """Read a code ground truth into ``(entry_point, tests)``; raises :class:`GoldError`.

    Example:
        >>> parse_code_gold('{"entry_point": "f", "tests": ["assert f(1) == 1"]}')
        ('f', ['assert f(1) == 1'])
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
    return entry_point, list(tests)


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
    version=1,
    problem_types=("code",),
    params_model=CodeExecParams,
)
class CodeExecVerifier:
    """Runs the answer's Python code against the ground truth's tests in a sandbox (1 or 0)."""

    def __init__(self, params: CodeExecParams) -> None:
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
            >>> v.score("def f(x): return -x", gold).accuracy
            1.0
        """
        try:
            entry_point, tests = parse_code_gold(gold)
        except GoldError as exc:
            return VerifyOutcome.unverifiable(str(exc))
        code = extract_code(answer_text if isinstance(answer_text, str) else "")
        if not code:
            return VerifyOutcome.wrong("no Python code in the answer", entry_point=entry_point)
        if len(code) > MAX_CODE_CHARS:
            return VerifyOutcome.wrong(
                f"code longer than {MAX_CODE_CHARS} characters", code_chars=len(code)
            )
        result = run_python_tests(
            code, tests, entry_point=entry_point, limits=self._limits(), module_name="solution"
        )
        sandbox = {
            "status": result.status,
            "entry_point_found": result.entry_point_found,
            "tests_passed": result.tests_passed,
            "tests_total": result.tests_total,
            "message": result.message,
            "duration_s": result.duration_s,
            "stderr": result.stderr,
        }
        if result.status == "sandbox_error":
            return VerifyOutcome.unverifiable(
                f"the sandbox could not run: {result.message}", sandbox=sandbox
            )
        if result.passed:
            return VerifyOutcome.ok(1.0, entry_point=entry_point, sandbox=sandbox)
        reason = {
            "syntax_error": "code does not compile",
            "error": "code raised before the tests ran",
            "timeout": "time limit reached",
            "crashed": "the process died before reporting",
        }.get(result.status, "a test failed")
        return VerifyOutcome.wrong(reason, entry_point=entry_point, sandbox=sandbox)
