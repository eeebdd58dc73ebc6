"""Task-spec language: models, YAML loading with includes, validation, prompts, data rows.

Example:
    >>> from videorl_kit.spec import load_spec
    >>> spec = load_spec("task_specs/synth-count.yaml")
    >>> spec.problem_type.value, spec.verifier.name, spec.budget.video.max_frames
    ('numerical', 'numeric', 16)
"""

from videorl_kit.spec.loader import SpecError, load_spec, load_specs
from videorl_kit.spec.models import (
    BudgetSpec,
    DataSpec,
    FieldMap,
    HubData,
    ImageBudget,
    PromptSpec,
    RewardSpec,
    RewardWeights,
    TaskSpec,
    VerifierRef,
    VideoBudget,
)
from videorl_kit.spec.yaml_source import SpecIssue

__all__ = [
    "BudgetSpec",
    "DataSpec",
    "FieldMap",
    "HubData",
    "ImageBudget",
    "PromptSpec",
    "RewardSpec",
    "RewardWeights",
    "SpecError",
    "SpecIssue",
    "TaskSpec",
    "VerifierRef",
    "VideoBudget",
    "load_spec",
    "load_specs",
]
