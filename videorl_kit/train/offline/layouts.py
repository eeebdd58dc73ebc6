"""What a row of a trajectory file says: the three layouts ``trajectories import`` reads.

==========  ==================================================================================
``kit``     ``response`` (text, required), the sample by ``sample_id`` or the task's own id
            column, ``task_id`` (optional with one ``--spec``), ``model`` (or ``policy_id``),
            ``token_ids`` with ``tokenizer`` (the name they were made with), per-token
            ``logprobs`` (or ``behaviour_logprobs``: the behaviour policy's, one per token id),
            ``reward`` (the file's own; kept beside the kit's score, never used instead)
``peer``    a data row of the public sets with ``has_offline_trajectory`` /
            ``offline_output`` (EasyVideoR1's mix-policy fields): the response is
            ``offline_output``; rows without one are passed over
``eval``    a line of ``videorl-kit eval``'s ``samples_<task>.jsonl`` (it has the
            ``doc_hash`` ... ``response_hash`` fields); its source is ``eval:<run id>`` and its
            trajectory id the one ``eval --trajectories`` gives, so importing a run that was
            already appended adds nothing
==========  ==================================================================================

Example:
    >>> from pathlib import Path
    >>> from videorl_kit.train.offline.readers import RawRow
    >>> row = parse_row(RawRow(Path("t.jsonl"), 4, {"sample_id": "s1", "response": "B",
    ...                                               "model": "m", "reward": 1}))
    >>> row.layout, row.sample_id, row.policy_id, row.file_reward
    ('kit', 's1', 'm', 1.0)
    >>> parse_row(RawRow(Path("t.jsonl"), 5, {"problem": "q", "has_offline_trajectory": False}))
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from videorl_kit.train.offline.readers import RawRow, RowError

EVAL_FIELDS = ("doc_hash", "prompt_hash", "target_hash", "response_hash")
"""Fields only a line of an eval ``samples_<task>.jsonl`` has."""

PEER_FLAG, PEER_OUTPUT = "has_offline_trajectory", "offline_output"


@dataclass(frozen=True)
class TrajectoryRow:
    """One response read from a file, before its sample and task are looked up."""

    where: str
    layout: str
    raw: dict[str, Any]
    response: str
    task_id: str | None = None
    sample_id: str | None = None
    policy_id: str | None = None
    token_ids: list[int] | None = None
    tokenizer_id: str | None = None
    behaviour_logprobs: list[float] | None = None
    file_reward: float | None = None
    eval_response_hash: str | None = None


def _text(row: RawRow, name: str, *, required: bool = False) -> str | None:
    value = row.data.get(name)
    if value is None:
        if required:
            raise RowError(f"{row.where}: the row has no {name!r} field")
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise RowError(f"{row.where}: field {name!r} must be text, not {type(value).__name__}")
    return str(value)


def _first(row: RawRow, *names: str) -> tuple[str, Any] | tuple[None, None]:
    for name in names:
        if row.data.get(name) is not None:
            return name, row.data[name]
    return None, None


def _number(row: RawRow, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RowError(f"{row.where}: field {name!r} must be a finite number, not {value!r}")
    return float(value)


def _token_ids(row: RawRow) -> tuple[list[int] | None, str | None, list[float] | None]:
    ids = row.data.get("token_ids")
    name, logprobs = _first(row, "behaviour_logprobs", "logprobs")
    tokenizer = _text(row, "tokenizer") or _text(row, "tokenizer_id")
    if ids is None:
        if logprobs is not None:
            raise RowError(
                f"{row.where}: field {name!r} needs the token ids it belongs to "
                "(field 'token_ids', with 'tokenizer')"
            )
        return None, None, None
    if not isinstance(ids, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in ids
    ):
        raise RowError(f"{row.where}: field 'token_ids' must be a list of token ids (integers ≥ 0)")
    if not ids:
        raise RowError(f"{row.where}: field 'token_ids' is empty")
    if tokenizer is None:
        raise RowError(
            f"{row.where}: token ids need the name of their tokenizer "
            "(field 'tokenizer': a model folder, a Hub id or tiny:<family>)"
        )
    if logprobs is None:
        return ids, tokenizer, None
    if not isinstance(logprobs, list) or len(logprobs) != len(ids):
        count = len(logprobs) if isinstance(logprobs, list) else type(logprobs).__name__
        raise RowError(
            f"{row.where}: field {name!r} must hold one log-prob per token id "
            f"({len(ids)}), not {count}"
        )
    values = [_number(row, name, v) for v in logprobs]
    if any(v > 1e-6 for v in values):
        raise RowError(
            f"{row.where}: field {name!r} holds a log-prob above 0 "
            f"({max(values)}); log-probs are ≤ 0"
        )
    return ids, tokenizer, [min(v, 0.0) for v in values]


def parse_row(row: RawRow) -> TrajectoryRow | None:
    """The :class:`TrajectoryRow` of a file row, or None for a peer data row without a
    trajectory. Raises :class:`RowError` naming ``file:line`` and the field at fault."""
    if row.error is not None:
        raise RowError(row.error)
    data = row.data
    if all(name in data for name in EVAL_FIELDS):
        reward = data.get("overall")
        return TrajectoryRow(
            where=row.where,
            layout="eval",
            raw=data,
            response=_text(row, "response", required=True) or "",
            task_id=_text(row, "task_id", required=True),
            sample_id=_text(row, "sample_id", required=True),
            file_reward=None if reward is None else _number(row, "overall", reward),
            eval_response_hash=_text(row, "response_hash", required=True),
        )
    if PEER_FLAG in data or PEER_OUTPUT in data:
        output = data.get(PEER_OUTPUT)
        if data.get(PEER_FLAG) is False or output is None or output == "":
            if data.get(PEER_FLAG) is True:
                raise RowError(f"{row.where}: {PEER_FLAG} is true but {PEER_OUTPUT} is empty")
            return None
        if not isinstance(output, str):
            raise RowError(f"{row.where}: field {PEER_OUTPUT!r} must be text")
        if not output.strip():
            return None
        return TrajectoryRow(
            where=row.where,
            layout="peer",
            raw=data,
            response=output,
            task_id=_text(row, "task_id"),
            sample_id=_text(row, "sample_id"),
        )
    response = data.get("response")
    if response is None:
        raise RowError(
            f"{row.where}: the row has no 'response' field (nor the public sets' "
            f"{PEER_OUTPUT!r}, nor an eval samples line's fields)"
        )
    if not isinstance(response, str):
        raise RowError(f"{row.where}: field 'response' must be text, not {type(response).__name__}")
    ids, tokenizer, logprobs = _token_ids(row)
    reward_name, reward = _first(row, "reward", "reward_overall")
    policy = _text(row, "model") or _text(row, "policy_id")
    return TrajectoryRow(
        where=row.where,
        layout="kit",
        raw=data,
        response=response,
        task_id=_text(row, "task_id"),
        sample_id=_text(row, "sample_id"),
        policy_id=policy,
        token_ids=ids,
        tokenizer_id=tokenizer,
        behaviour_logprobs=logprobs,
        file_reward=None if reward is None else _number(row, str(reward_name), reward),
    )
