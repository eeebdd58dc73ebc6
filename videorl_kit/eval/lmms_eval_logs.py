"""lmms-eval's per-sample logs (``[<date>_]samples_<task>.jsonl``), read as replayable answers.

lmms-eval (``--log_samples``) writes one JSON object per document: ``doc_id`` (the index of
the document in the task's dataset split), ``target``, ``filtered_resps`` (the response after
the task's filters, with reasoning tags stripped when asked) and ``resps`` (the raw
response; lmms-eval 0.7 leaves it out when it equals ``filtered_resps``), the task's metric
entries and, before 0.7, the ``doc`` itself. A one-response document holds a string, or a
list of one string (nested once more in ``resps``).

The kit grades the raw response (its verifiers extract the answer themselves): ``resps``
when present, else ``filtered_resps``. The task comes from the file name; an lmms-eval task
name is an alias of the kit benchmark :data:`LMMS_EVAL_ALIASES` maps it to (the one table of
them; docs/eval.md lists it).

Example:
    >>> lmms_task_from_filename("20250101_120000_samples_videomme.jsonl")
    'videomme'
    >>> lmms_task_from_filename("results.json") is None
    True
    >>> LMMS_EVAL_ALIASES["videomme"]
    'video-mme'
    >>> LmmsLine.parse({"doc_id": 3, "filtered_resps": ["B"], "resps": [["The answer is B"]]},
    ...     1).response
    'The answer is B'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

_MVBENCH_TASKS = (
    "action_antonym", "action_count", "action_localization", "action_prediction",
    "action_sequence", "character_order", "counterfactual_inference", "egocentric_navigation",
    "episodic_reasoning", "fine_grained_action", "fine_grained_pose", "moving_attribute",
    "moving_count", "moving_direction", "object_existence", "object_interaction",
    "object_shuffle", "scene_transition", "state_change", "unexpected_action",
)  # fmt: skip

LMMS_EVAL_ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "videomme": "video-mme",
        "mvbench": "mvbench",
        **{f"mvbench_{name}": "mvbench" for name in _MVBENCH_TASKS},
        "tempcompass_multi_choice": "tempcompass",
        "lvbench": "lvbench",
        "longvideobench_val_v": "longvideobench",
        "mlvu_test": "mlvu",
        "video_holmes": "video-holmes",
        "minerva": "minerva",
        "mmvu_val": "mmvu-mc",
        "video_mmmu_perception": "video-mmmu",
        "video_mmmu_comprehension": "video-mmmu",
        "video_mmmu_adaptation": "video-mmmu",
        "videomathqa_mcq": "videomathqa",
        "vsibench": "vsi-bench",
        "temporal_grounding_charades": "charades-sta",
        "motionbench_full": "motionbench",
        "ovo_backward": "ovo-bench",
        "ovo_realtime": "ovo-bench",
        "ovo_forward": "ovo-bench",
    }
)
"""lmms-eval 0.7.3 task name -> the kit benchmark (spec id) it evaluates: the one table of
lmms-eval aliases (listed in docs/eval.md). How a benchmark's logged ``doc_id``/``doc`` map
onto its rows is the spec's own ``eval.lmms_eval`` section.

Example:
    >>> sorted({kit for kit in LMMS_EVAL_ALIASES.values()})[:3]
    ['charades-sta', 'longvideobench', 'lvbench']
"""


_FILENAME = re.compile(r"^(?:.*_)?samples_(?P<task>[A-Za-z0-9_.+-]+?)\.jsonl$")


def lmms_task_from_filename(name: str) -> str | None:
    """The lmms-eval task a ``samples_<task>.jsonl`` file logs (None: not such a name).

    Example:
        >>> lmms_task_from_filename("samples_mvbench_action_count.jsonl")
        'mvbench_action_count'
    """
    found = _FILENAME.match(name)
    return found.group("task") if found else None


def is_lmms_line(item: dict[str, Any]) -> bool:
    """Whether a parsed JSON line is an lmms-eval sample log entry.

    Example:
        >>> is_lmms_line({"doc_id": 0, "filtered_resps": "A"}), is_lmms_line({"id": "a"})
        (True, False)
    """
    return "doc_id" in item and ("filtered_resps" in item or "resps" in item)


def _one_response(value: Any, key: str) -> str:
    """The single response in a ``resps``/``filtered_resps`` value (a string, possibly
    wrapped in one-element lists); ``ValueError`` otherwise."""
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        raise ValueError(
            f"{key!r} holds {len(value)} responses for one doc (repeats or a loglikelihood "
            "task); the kit replays one generated response per doc"
        )
    raise ValueError(f"{key!r} is not a response string")


@dataclass(frozen=True)
class LmmsLine:
    """One lmms-eval log entry: where it is, which doc, and the response to grade."""

    number: int
    doc_id: int
    response: str
    target: str | None
    doc: dict[str, Any] | None

    @classmethod
    def parse(cls, item: dict[str, Any], number: int) -> LmmsLine:
        """Read one entry; ``ValueError`` names what is wrong with it."""
        doc_id = item.get("doc_id")
        if isinstance(doc_id, bool) or not isinstance(doc_id, int) or doc_id < 0:
            raise ValueError("'doc_id' must be a non-negative integer")
        key = "resps" if "resps" in item else "filtered_resps"
        response = _one_response(item[key], key)
        target = item.get("target")
        doc = item.get("doc")
        return cls(
            number=number,
            doc_id=doc_id,
            response=response,
            target=None if target is None else str(target),
            doc=doc if isinstance(doc, dict) else None,
        )
