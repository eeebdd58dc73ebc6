"""The list of synthetic tasks: names, problem types and modalities (cheap to import).

The question builders live in :mod:`videorl_kit.synth.suite`; this module only names the
tasks, so the command line can list them without loading numpy, PyAV or Pillow.

Example:
    >>> TASK_NAMES[:3]
    ('multiple_choice', 'count', 'regression')
    >>> task_info("tracking").problem_type
    <ProblemType.TRACKING: 'tracking'>
"""

from __future__ import annotations

from dataclasses import dataclass

from videorl_kit.core.problem_types import ProblemType


@dataclass(frozen=True)
class TaskInfo:
    """One synthetic task: file stem, problem type, modality and a one-line summary."""

    name: str
    problem_type: ProblemType
    data_type: str
    summary: str


#: Every task of the suite, in output order.
CATALOG: tuple[TaskInfo, ...] = (
    TaskInfo("multiple_choice", ProblemType.MULTIPLE_CHOICE, "video",
             "colour that appears last / direction of motion, lettered options"),
    TaskInfo("count", ProblemType.NUMERICAL, "video",
             "shapes visible at a time, shown in total, or of one colour"),
    TaskInfo("regression", ProblemType.REGRESSION, "video",
             "distance travelled (px), speed (px/s) or time visible (s)"),
    TaskInfo("boolean", ProblemType.BOOLEAN, "video",
             "does a shape appear / is it visible at a time (balanced yes/no)"),
    TaskInfo("temporal", ProblemType.TEMPORAL_GROUNDING, "video",
             "time span in which a shape is visible"),
    TaskInfo("spatial", ProblemType.SPATIAL_GROUNDING, "video",
             "box of a shape at a whole second"),
    TaskInfo("spatiotemporal", ProblemType.SPATIOTEMPORAL_GROUNDING, "video",
             "span plus one box per whole second inside it"),
    TaskInfo("tracking", ProblemType.TRACKING, "video",
             "one box per whole second for a moving shape"),
    TaskInfo("ocr", ProblemType.OCR, "video",
             "banner text, or the word on a moving sign"),
    TaskInfo("caption", ProblemType.OPEN_ENDED, "video",
             "one-sentence caption of how the shapes move"),
    TaskInfo("math", ProblemType.MATH, "video",
             "value of the arithmetic expression shown"),
    TaskInfo("critic", ProblemType.CRITIC, "video",
             "which of two captions is right"),
    TaskInfo("image_multiple_choice", ProblemType.MULTIPLE_CHOICE, "image",
             "shape of a colour / colour of a shape in a still"),
    TaskInfo("image_count", ProblemType.NUMERICAL, "image",
             "shapes of a kind, or all shapes, in a still"),
    TaskInfo("image_ocr", ProblemType.OCR, "image",
             "banner text or sign word in a still"),
    TaskInfo("image_spatial", ProblemType.SPATIAL_GROUNDING, "image",
             "box of a named shape in a still"),
    TaskInfo("code", ProblemType.CODE, "text",
             "small Python functions about boxes, spans and directions, graded by asserts"),
)  # fmt: skip

TASK_NAMES: tuple[str, ...] = tuple(info.name for info in CATALOG)


def task_info(name: str) -> TaskInfo:
    """The catalog entry of task ``name``; raises KeyError listing the valid names."""
    for info in CATALOG:
        if info.name == name:
            return info
    raise KeyError(f"unknown synth task {name!r}; choose from {', '.join(TASK_NAMES)}")
