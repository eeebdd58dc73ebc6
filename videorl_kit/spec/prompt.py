"""Prompt rendering in a sandboxed, resource-bounded Jinja environment.

Templates see ``question``, ``options`` (list or None, each ``"A. text"``),
``option_texts`` (the options without their letters, for benchmarks that letter them their own
way, such as ``(A) text``), ``problem_type`` and ``row`` (the raw data row). Undefined
variables are errors, the sandbox blocks attribute tricks (a spec can never run code), and
every render is bounded in steps, time and size (:mod:`videorl_kit.spec.template_sandbox`),
so a template can neither hang nor exhaust memory.

Example:
    >>> render_template("{{ question }}\\n{% for o in options %}{{ o }}\\n{% endfor %}",
    ...                 question="Colour?", options=["A. Red", "B. Blue"])
    'Colour?\\nA. Red\\nB. Blue\\n'
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from jinja2.exceptions import SecurityError

from videorl_kit.core.errors import UserError
from videorl_kit.spec.template_sandbox import (
    TemplateLimitError,
    TemplateProblem,
    compile_template,
    render_bounded,
)

if TYPE_CHECKING:
    from videorl_kit.spec.data import Sample
    from videorl_kit.spec.models import TaskSpec

#: What a template sees when no data row is at hand (``validate`` renders every template).
SYNTHETIC_QUESTION = "What happens in the video?"
SYNTHETIC_OPTIONS = ["A. The first thing", "B. The second thing"]
_OPTION_LETTER = re.compile(r"^\s*\(?[A-Z]\s*[.:)]\s*")


def option_texts(options: list[str] | None) -> list[str] | None:
    """Options without their leading letter (``"A. text"``, ``"A: text"``, ``"(A) text"``).

    Example:
        >>> option_texts(["A. Red", "B: Blue", "(C) Green", "no letter"])
        ['Red', 'Blue', 'Green', 'no letter']
    """
    if options is None:
        return None
    return [_OPTION_LETTER.sub("", option, count=1) for option in options]


def template_problem(text: str) -> TemplateProblem | None:
    """Why ``text`` cannot be used as a template (syntax, a filter not allowed), or None.

    Example:
        >>> str(template_problem("{{ question }"))[:40]
        'template syntax error on template line 1'
        >>> template_problem("{{ question }}") is None
        True
    """
    try:
        compile_template(text)
    except TemplateProblem as problem:
        return problem
    return None


def render_problem(text: str, variables: dict[str, Any], *, synthetic: bool) -> str | None:
    """Why rendering ``text`` with ``variables`` fails, or None if it renders.

    With ``synthetic=True`` the variables are made up: undefined names render as empty and
    only what no data row can excuse is reported (a limit reached, a sandbox violation).

    Example:
        >>> render_problem("{{ row.category }}", {"row": {}}, synthetic=True) is None
        True
        >>> render_problem("{% for a in range(99999) %}{% for b in range(9) %}{% endfor %}"
        ...                "{% endfor %}", {}, synthetic=True)
        'more than 100000 steps (loop iterations, calls and filters)'
    """
    try:
        render_bounded(text, variables, strict=not synthetic)
    except (TemplateProblem, TemplateLimitError) as exc:
        return str(exc)
    except SecurityError:
        return "the template uses an attribute or call the sandbox does not allow"
    except Exception as exc:  # undefined name, type error: only a real row can tell
        return None if synthetic else f"{type(exc).__name__}: {exc}"
    return None


def synthetic_variables(problem_type: str, row_fields: dict[str, str]) -> dict[str, Any]:
    """Template variables for a made-up row (``row_fields``: the spec's column names).

    Example:
        >>> synthetic_variables("multiple_choice", {"question": "q"})["row"]["q"]
        'What happens in the video?'
    """
    row = {
        row_fields.get("question", "problem"): SYNTHETIC_QUESTION,
        row_fields.get("answer", "answer"): "A",
        row_fields.get("options", "options"): list(SYNTHETIC_OPTIONS),
    }
    return {
        "question": SYNTHETIC_QUESTION,
        "options": list(SYNTHETIC_OPTIONS),
        "option_texts": option_texts(SYNTHETIC_OPTIONS),
        "problem_type": problem_type,
        "row": row,
    }


def sample_variables(sample: Sample) -> dict[str, Any]:
    """The variables a template sees for one data row."""
    return {
        "question": sample.question,
        "options": sample.options,
        "option_texts": option_texts(sample.options),
        "problem_type": sample.problem_type.value,
        "row": sample.raw,
    }


def render_template(text: str, **variables: Any) -> str:
    """Render ``text`` with ``variables`` in the bounded sandbox; raises :class:`UserError`."""
    try:
        return render_bounded(text, variables)
    except Exception as exc:  # undefined variable, sandbox violation, limit reached, type error
        raise UserError(f"cannot render prompt template: {type(exc).__name__}: {exc}") from None


def render_prompt(spec: TaskSpec, sample: Sample) -> str:
    """Render the user turn of ``spec``'s prompt for one ``sample``.

    Example:
        >>> import tempfile
        >>> from videorl_kit.spec import load_spec
        >>> from videorl_kit.spec.data import iter_samples
        >>> from videorl_kit.synth import write_demo_task
        >>> spec = load_spec(write_demo_task(tempfile.mkdtemp()))
        >>> render_prompt(spec, next(iter_samples(spec)))
        'How many shapes are visible at 3 s?\\nPut the final answer in <answer></answer>.'
    """
    try:
        return render_template(spec.prompt.template, **sample_variables(sample))
    except UserError as exc:
        raise UserError(f"{spec.id}: sample {sample.sample_id}: {exc}") from None
