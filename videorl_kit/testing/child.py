"""Scoring in another process: the other side of the cross-process determinism check.

``python -m videorl_kit.testing.child`` reads one JSON object from stdin, ``{"reference":
Subject.reference(), "inputs": [[response, gold, options], ...]}``, rebuilds the verifier from
its reference (importing its module, as a trainer's worker would), scores every input and
writes ``{"verdicts": [[accuracy, format, overall, status], ...]}``, or ``{"error": "..."}``
when the verifier cannot be rebuilt. :func:`score_elsewhere` runs it in processes with hash
seeds of their own (two, so that a verdict that hangs on ``hash()`` or set order differs
between them whatever this process's seed is).

Example:
    >>> from videorl_kit.testing.subject import resolve_verifier
    >>> reference = resolve_verifier("boolean").reference()
    >>> score_elsewhere(reference, [("<answer>yes</answer>", "yes", None)])
    [[(1.0, 1.0, 1.0, 'ok')], [(1.0, 1.0, 1.0, 'ok')]]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from videorl_kit.core.errors import VideoRLKitError
from videorl_kit.rewards.result import RewardResult
from videorl_kit.testing.subject import subject_from_reference

Verdict = tuple[float, float, float, str]
#: Seconds the other process may take, on top of one second per input.
CHILD_TIMEOUT_S = 120.0


class ChildError(VideoRLKitError, RuntimeError):
    """The other process could not score (the message says why)."""


def verdict(result: RewardResult) -> Verdict:
    """What a check compares between two runs of one input.

    Example:
        >>> verdict(RewardResult(1.0, 0.0, 0.9))
        (1.0, 0.0, 0.9, 'ok')
    """
    return (result.accuracy, result.format, result.overall, result.status)


def _search_path() -> str:
    entries = [p or os.getcwd() for p in sys.path]
    return os.pathsep.join(p for p in dict.fromkeys(entries) if os.path.isdir(p))


def other_hash_seeds() -> tuple[str, str]:
    """Two ``PYTHONHASHSEED`` values, both different from this process's when it has one.

    Example:
        >>> len(set(other_hash_seeds()))
        2
    """
    mine = os.environ.get("PYTHONHASHSEED", "")
    base = int(mine) + 1 if mine.isdigit() else 0
    return str(base), str(base + 1)


def score_elsewhere(
    reference: Mapping[str, Any], inputs: Sequence[tuple[str, str, list[str] | None]]
) -> list[list[Verdict]]:
    """Score ``inputs`` in two new Python processes at once (this one's search path, hash seeds
    of their own); one list of verdicts per process.

    Raises :class:`ChildError` when a process fails or cannot rebuild the verifier.
    """
    wire_inputs = [_to_wire(list(item)) for item in inputs]
    payload = json.dumps({"reference": dict(reference), "inputs": wire_inputs})
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "videorl_kit.testing.child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": _search_path(), "PYTHONHASHSEED": seed},
        )
        for seed in other_hash_seeds()
    ]
    try:
        return [_answer(child, payload, len(inputs)) for child in children]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()


def _to_wire(value: Any) -> Any:
    """``value`` with each string as one that JSON carries unchanged: its UTF-8 bytes (lone
    surrogates kept), one character per byte. JSON would read the escapes of two lone
    surrogates back as one pair, a different string.

    Example:
        >>> _from_wire(_to_wire(["\\ud800\\udf38", None])) == ["\\ud800\\udf38", None]
        True
    """
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("latin-1")
    if isinstance(value, (list, tuple)):
        return [_to_wire(v) for v in value]
    return value


def _from_wire(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("latin-1").decode("utf-8", "surrogatepass")
    if isinstance(value, list):
        return [_from_wire(v) for v in value]
    return value


def _answer(child: subprocess.Popen[str], payload: str, n_inputs: int) -> list[Verdict]:
    try:
        out, err = child.communicate(payload, timeout=CHILD_TIMEOUT_S + n_inputs)
    except subprocess.TimeoutExpired:
        raise ChildError("the other process did not finish in time") from None
    try:
        answer = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = (err or out).strip().splitlines()[-1:] or ["no output"]
        raise ChildError(f"the other process failed (exit {child.returncode}): {tail[0]}") from None
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
    verdicts = [verdict(function(*_from_wire(item))) for item in request["inputs"]]
    print(json.dumps({"verdicts": verdicts}))


if __name__ == "__main__":
    main()
