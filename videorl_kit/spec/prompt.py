"""Prompt rendering in a sandboxed Jinja environment.

Templates see ``question``, ``options`` (list or None), ``problem_type`` and ``row``
(the raw data row). Undefined variables are errors, and the sandbox blocks attribute
tricks, so a spec can never run code.

Example:
    >>> render_template("{{ question }}\\n{% for o in options %}{{ o }}\\n{% endfor %}",
    ...                 question="Colour?", options=["A. Red", "B. Blue"])
    'Colour?\\nA. Red\\nB. Blue\\n'
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from jinja2 import StrictUndefined, TemplateSyntaxError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from videorl_kit.core.errors import UserError

if TYPE_CHECKING:
    from videorl_kit.spec.data import Sample
    from videorl_kit.spec.models import TaskSpec


@lru_cache(maxsize=1)
def _environment() -> ImmutableSandboxedEnvironment:
    return ImmutableSandboxedEnvironment(
        undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False
    )


def template_problem(text: str) -> str | None:
    """Return why ``text`` is not a valid template, or None if it compiles.

    Example:
        >>> template_problem("{{ question }")[:40]
        'template syntax error on template line 1'
        >>> template_problem("{{ question }}") is None
        True
    """
    try:
        _environment().parse(text)
    except TemplateSyntaxError as exc:
        return f"template syntax error on template line {exc.lineno}: {exc.message}"
    return None


def render_template(text: str, **variables: Any) -> str:
    """Render ``text`` with ``variables`` in the sandbox; raises :class:`UserError` on failure."""
    try:
        return _environment().from_string(text).render(**variables)
    except Exception as exc:  # undefined variable, sandbox violation, type error in template
        raise UserError(f"cannot render prompt template: {type(exc).__name__}: {exc}") from None


def render_prompt(spec: TaskSpec, sample: Sample) -> str:
    """Render the user turn of ``spec``'s prompt for one ``sample``.

    Example:
        >>> from videorl_kit.spec.data import Sample  # doctest: +SKIP
        >>> render_prompt(spec, sample)               # doctest: +SKIP
        'How many shapes appear?\\nPut the final answer in <answer></answer>.'
    """
    try:
        return render_template(
            spec.prompt.template,
            question=sample.question,
            options=sample.options,
            problem_type=sample.problem_type.value,
            row=sample.raw,
        )
    except UserError as exc:
        raise UserError(f"{spec.id}: sample {sample.sample_id}: {exc}") from None
