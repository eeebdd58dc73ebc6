"""Scoring in another process: the other side of the cross-process determinism check.

``python -m videorl_kit.testing.child`` reads one JSON object from stdin, ``{"reference":
Subject.reference(), "inputs": [[response, gold, options], ...]}``, rebuilds the verifier from
its reference (importing its module, as a trainer's worker would), scores every input and
writes ``{"verdicts": [[accuracy, format, overall, status], ...]}``, or ``{"error": "..."}``
when the verifier cannot be rebuilt. :func:`score_elsewhere` runs it with a hash seed of its
own, so a verdict that hangs on ``hash()`` or set order differs there.

Example:
    >>> from videorl_kit.testing.subject import resolve_verifier
    >>> reference = resolve_verifier("boolean").reference()
    >>> score_elsewhere(reference, [("<answer>yes</answer>", "yes", None)])
    [(1.0, 1.0, 1.0, 'ok')]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from videorl_kit.rewards.result import RewardResult
from videorl_kit.testing.subject import subject_from_reference

Verdict = tuple[float, float, float, str]
#: Seconds the other process may take, on top of one second per input.
CHILD_TIMEOUT_S = 120.0


class ChildError(RuntimeError):
    """The other process could not score (the message says why)."""


def verdict(result: RewardResult) -> Verdict:
    """What a check compares between two runs of one input.

    Example:
        >>> verdict(RewardResult(1.0, 0.0, 0.9))
        (1.0, 0.0, 0.9, 'ok')
    """
    return (result.accuracy, result.format, result.overall, result.status)


def _search_path() -> str:
    entries = [os.getcwd() if not p else p for p in sys.path]
    return os.pathsep.join(p for p in dict.fromkeys(entries) if os.path.isdir(p))


def other_hash_seed() -> str:
    """A ``PYTHONHASHSEED`` that differs from this process's (random when it is unset)."""
    mine = os.environ.get("PYTHONHASHSEED", "")
    return str(int(mine) + 1) if mine.isdigit() else "0"


def score_elsewhere(
    reference: Mapping[str, Any], inputs: Sequence[tuple[str, str, list[str] | None]]
) -> list[Verdict]:
    """Score ``inputs`` in a new Python process (this one's search path, another hash seed).

    Raises :class:`ChildError` when the process fails or cannot rebuild the verifier.
    """
    env = {**os.environ, "PYTHONPATH": _search_path(), "PYTHONHASHSEED": other_hash_seed()}
    payload = json.dumps({"reference": dict(reference), "inputs": [list(i) for i in inputs]})
    try:
        done = subprocess.run(
            [sys.executable, "-m", "videorl_kit.testing.child"],
            input=payload,  # ensure_ascii JSON: lone surrogates travel as \\ud800 escapes
            capture_output=True,
            text=True,
            env=env,
            timeout=CHILD_TIMEOUT_S + len(inputs),
        )
    except subprocess.TimeoutExpired:
        raise ChildError("the other process did not finish in time") from None
    try:
        answer = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise ChildError(f"the other process failed (exit {done.returncode}): {tail[0]}") from None
    if "error" in answer:
        raise ChildError(answer["error"])
    return [tuple(v) for v in answer["verdicts"]]  # type: ignore[misc]


def main() -> None:
    """Read the request from stdin, write the verdicts (or the error) to stdout."""
    request = json.loads(sys.stdin.read())
    try:
        function = subject_from_reference(request["reference"]).reward_function()
    except Exception as exc:  # reported to the parent, which names it
        print(json.dumps({"error": f"cannot rebuild the verifier: {type(exc).__name__}: {exc}"}))
        return
    verdicts = [verdict(function(*item)) for item in request["inputs"]]
    print(json.dumps({"verdicts": verdicts}))


if __name__ == "__main__":
    main()
