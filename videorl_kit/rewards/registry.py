"""The kit's problem types and built-in verifiers: their one registration.

For each problem type: its canonical name, the spellings EasyVideoR1, Video-R1 and friends use
for it, and its default verifier; for each built-in verifier, the module that implements it
(imported the first time the verifier is asked for, so a module that fails to import breaks
only its own verifier); and the built-in versions that were retired, with why.

The kit finds this module the way it finds a third-party package's registration: through the
entry-point group ``videorl_kit.problem_types`` (``pyproject.toml``), when a problem type or
verifier is first looked up. Importing ``videorl_kit.rewards`` imports it too, so a copy of the
kit without its installed metadata (the kit inside a run bundle, on a Ray node) registers the
same types. It imports nothing but the registries of ``videorl_kit.core``: it is cheap, and
this is the only file a new problem type's registration edits (``docs/extending.md``).

Example:
    >>> from videorl_kit.core.problem_types import problem_type_info
    >>> problem_type_info("numeric").default_verifier, problem_type_info("llava").problem_type
    ('numeric', <ProblemType.CRITIC: 'critic'>)
"""

from __future__ import annotations

from videorl_kit.core.problem_types import register_problem_type
from videorl_kit.core.verifiers import register_retired_verifier, register_verifier_location

#: (problem type, default verifier, aliases), in the order of the reward contract's table.
PROBLEM_TYPES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("multiple_choice", "choice", ("multiple choice", "multiple-choice", "mcq")),
    ("numerical", "numeric", ("number", "numeric")),
    ("regression", "mra", ()),
    ("boolean", "boolean", ("binary classification", "yes/no")),
    ("temporal_grounding", "temporal_iou", ("temporal grounding",)),
    ("spatial_grounding", "box_iou", ("spatial grounding",)),
    ("spatiotemporal_grounding", "spatiotemporal_iou",
     ("spatial-temporal grounding", "spatio-temporal grounding", "spatiotemporal grounding")),
    ("tracking", "tracking_iou", ()),
    ("ocr", "wer", ()),
    ("open_ended", "rouge", ("open-ended", "open ended", "free-form", "video qa",
                             "video description")),
    ("math", "math", ("mathematics",)),
    ("code", "code_exec", ("coding",)),
    ("critic", "preference", ("llava", "preference")),
)  # fmt: skip

#: Built-in verifiers: (name, version) -> the module (or "module:class") that registers it.
VERIFIERS: dict[tuple[str, int], str] = {
    ("choice", 2): "videorl_kit.rewards.choice",
    ("numeric", 2): "videorl_kit.rewards.numeric",
    ("mra", 2): "videorl_kit.rewards.numeric",
    ("boolean", 2): "videorl_kit.rewards.boolean",
    ("temporal_iou", 2): "videorl_kit.rewards.grounding",
    ("box_iou", 2): "videorl_kit.rewards.grounding",
    ("spatiotemporal_iou", 2): "videorl_kit.rewards.grounding",
    ("tracking_iou", 2): "videorl_kit.rewards.grounding",
    ("wer", 2): "videorl_kit.rewards.ocr",
    ("rouge", 2): "videorl_kit.rewards.open_ended",
    ("math", 2): "videorl_kit.rewards.math",
    ("code_exec", 3): "videorl_kit.rewards.code:CodeExecVerifier",
    ("preference", 2): "videorl_kit.rewards.preference",
}

#: Built-in versions that were replaced, with why: their scores cannot be reproduced by the
#: current code (docs/verifiers.md, changelog).
RETIRED: dict[tuple[str, int], str] = {
    **dict.fromkeys(
        [(name, 1) for name in ("choice", "numeric", "mra", "boolean", "temporal_iou", "box_iou",
                                "spatiotemporal_iou", "tracking_iou", "wer", "rouge", "math",
                                "preference")],
        "issue 10 changed how answers are read",
    ),
    ("code_exec", 1): "withdrawn: its verdicts could be forged (issue 11)",
    ("code_exec", 2): "withdrawn: its tests that were not plain calls could be forged (issue 19)",
}  # fmt: skip

for _name, _verifier, _aliases in PROBLEM_TYPES:
    register_problem_type(_name, default_verifier=_verifier, aliases=_aliases)
for (_name, _version), _target in VERIFIERS.items():
    register_verifier_location(_name, _version, _target)
for (_name, _version), _why in RETIRED.items():
    register_retired_verifier(_name, _version, _why)
