"""Prompt templates cannot hang, blow up memory or escape the sandbox; ``validate`` renders them."""

from __future__ import annotations

import json
import threading
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment
from typer.testing import CliRunner

from tests.spec.conftest import MINIMAL
from videorl_kit.cli import app
from videorl_kit.spec import SpecError, load_spec
from videorl_kit.spec.template_sandbox import (
    RenderLimits,
    TemplateLimitError,
    TemplateProblem,
    render_bounded,
    text_size,
)

BIG = "{% set b = 'x' * 1000000 %}"
REFS = BIG + "{% set refs = [b, b, b, b, b, b, b, b, b, b, b, b] %}"

#: Each probe an attacker (or a careless spec author) would try, and what stops it.
BOMBS = {
    "nested loops": ("{% for a in range(99999) %}{% for b in range(99999) %}{% endfor %}"
                     "{% endfor %}", TemplateLimitError),
    "loops over a list": ("{% set r = range(99999)|list %}{% for a in r %}{% for b in r %}"
                          "{% endfor %}{% endfor %}", TemplateLimitError),
    "string times": ("{{ 'x' * 1000000000 }}", TemplateLimitError),
    "list times": ("{{ ([1] * 999999999)|length }}", TemplateLimitError),
    "power": ("{{ 10 ** 100000 }}", TemplateLimitError),
    "big products": ("{% set n = 2 ** 4000 %}{{ n * n * n }}", TemplateLimitError),
    "doubling with ~": ("{% set ns = namespace(s='x') %}{% for i in range(64) %}"
                        "{% set ns.s = ns.s ~ ns.s %}{% endfor %}", TemplateLimitError),
    "doubling with +": ("{% set ns = namespace(s='x') %}{% for i in range(64) %}"
                        "{% set ns.s = ns.s + ns.s %}{% endfor %}", TemplateLimitError),
    "doubling in macros": ("{% macro d(s, n) %}{% if n %}{{ d(s ~ s, n - 1) }}{% else %}"
                           "{{ s|length }}{% endif %}{% endmacro %}{{ d('x', 60) }}",
                           TemplateLimitError),
    "macro fan-out": ("{% macro f(n) %}{% if n %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}"
                      "{% endmacro %}{{ f(60) }}", TemplateLimitError),
    "endless recursion": ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", TemplateLimitError),
    "set block": (BIG + "{% set s %}{% for i in range(99999) %}{{ b }}{% endfor %}{% endset %}",
                  TemplateLimitError),
    "output": (BIG + "{% for i in range(99999) %}{{ b }}{% endfor %}", TemplateLimitError),
    "join of references": (REFS + "{{ refs|join }}", TemplateLimitError),
    "list as text": (REFS + "{{ refs|string }}", TemplateLimitError),
    "list printed": (REFS + "{{ refs }}", TemplateLimitError),
    "list through a text filter": (REFS + "{{ refs|upper }}", TemplateLimitError),
    "many big replacements": (BIG + "{{ range(99999)|map('string')|map('replace', '1', b)"
                              "|list|length }}", TemplateLimitError),
    "replace the empty string": (BIG + "{{ b|replace('', 'yyyy') }}", TemplateLimitError),
    "str.replace": (BIG + "{{ b.replace('x', 'xx') }}", TemplateLimitError),
    "indent": ("{% set n = '\n' * 500000 %}{{ n|indent(1000) }}", TemplateLimitError),
    "tojson indent": ("{{ [[[[1]]]]|tojson(indent=999999999) }}", TemplateLimitError),
    "% width": ("{{ '%999999999s' % 'x' }}", TemplateLimitError),
    "% star width": ("{{ '%*s' % (999999999, 'x') }}", TemplateLimitError),
    "str.format width": ("{{ '{:>999999999}'.format('x') }}", SecurityError),
    "str.ljust": ("{{ 'x'.ljust(999999999) }}", SecurityError),
    "int.to_bytes": ("{{ (5).to_bytes(999999999, 'big') }}", SecurityError),
    "dunder": ("{{ ''.__class__.__mro__ }}", SecurityError),
    "center": ("{{ 'x'|center(999999999) }}", TemplateProblem),
    "slice": ("{{ [1]|slice(999999999)|list }}", TemplateProblem),
    "batch": ("{{ [1]|batch(999999999, 0)|list }}", TemplateProblem),
    "wordwrap": ("{{ 'x'|wordwrap(5, wrapstring='y' * 100) }}", TemplateProblem),
    "recursive loop": ("{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}", TemplateProblem),
    "include": ("{% include '/etc/passwd' %}", TemplateProblem),
    "import": ("{% import '/etc/passwd' as x %}", TemplateProblem),
    "deep parentheses": ("{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}", TemplateProblem),
    "huge template": ("x" * 100_001, TemplateProblem),  # compiling costs time in proportion
    "many expressions": ("{{ q }}" * 5000, TemplateProblem),
}  # fmt: skip


@pytest.mark.parametrize(("template", "stopped_by"), BOMBS.values(), ids=BOMBS)
def test_bombs_are_stopped_before_they_cost_memory_or_time(template, stopped_by):
    tracemalloc.start()
    try:
        with pytest.raises(stopped_by):
            render_bounded(template)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20  # the largest value allowed is 1 M characters


def test_lipsum_is_gone():
    with pytest.raises(Exception, match="'lipsum' is undefined"):
        render_bounded("{{ lipsum(999999) }}")


@pytest.mark.parametrize(
    ("limits", "template", "message"),
    [
        (RenderLimits(max_steps=5), "{% for i in range(6) %}{% endfor %}", "more than 5 steps"),
        (RenderLimits(max_chars=10), "{{ 'abcdef' ~ 'ghijkl' }}", "longer than 10 characters"),
        (
            RenderLimits(max_chars=10),
            "{% for i in range(11) %}x{% endfor %}",
            "output longer than 10",
        ),
        (
            RenderLimits(max_seconds=0.0),
            "{% for i in range(3) %}{% endfor %}",
            "took longer than 0 s",
        ),
    ],
)
def test_each_limit_names_itself(limits, template, message):
    with pytest.raises(TemplateLimitError, match=message):
        render_bounded(template, {}, limits)


LEGIT = [
    "{{ question }}\n{% if options %}Options:\n{% for o in options %}{{ o }}\n{% endfor %}{% endif %}",
    "{{ question|trim|upper }} ({{ options|length }} options: {{ options|join(', ') }})",
    "{% for o in options %}{{ loop.index }}. {{ o|replace('A. ', '') }}{% if not loop.last %}; "
    "{% endif %}{% endfor %}",
    "{% macro opt(o) %}[{{ o }}]{% endmacro %}{% for o in options %}{{ opt(o) }}{% endfor %}",
    "{{ 'Q: ' ~ question ~ ' (' ~ problem_type ~ ')' }}",
    "{% set ns = namespace(n=0) %}{% for o in options %}{% set ns.n = ns.n + 1 %}{% endfor %}"
    "{{ ns.n }}",
    "{% set intro %}Look at {{ row.get('data_type', 'video') }}.{% endset %}{{ intro }}",
    "{{ row|dictsort|map('first')|join(',') }} {{ row.answer|tojson }} {{ '%s!' % question }}",
    "{{ (question ~ ' ') * 2 }}{{ options|map('lower')|select('ne', 'b. no')|list }}",
    "{{ question.split()|reverse|join(' ') }} {{ question.startswith('What') }}",
    "{% filter upper %}{{ question }}{% endfilter %} {{ options|first|truncate(5, True, '') }}",
]
VARIABLES = {
    "question": "  What colour is the ball? ",
    "options": ["A. Red", "B. No"],
    "problem_type": "multiple_choice",
    "row": {"answer": "A", "data_type": "video", "problem": "What colour?"},
}


@pytest.mark.parametrize("template", LEGIT)
def test_ordinary_templates_render_exactly_as_plain_jinja(template):
    plain = ImmutableSandboxedEnvironment(keep_trailing_newline=True, autoescape=False)
    assert render_bounded(template, VARIABLES) == plain.from_string(template).render(VARIABLES)


def test_budgets_are_per_render_and_per_thread():
    near_limit = "{% for i in range(60000) %}{% endfor %}ok"  # 60,000 of 100,000 steps
    results: list[str] = []

    def render() -> None:
        for _ in range(3):
            results.append(render_bounded(near_limit))

    threads = [threading.Thread(target=render) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == ["ok"] * 12


# -- the loader and validate ---------------------------------------------------------------------


def spec_with(template: str) -> str:
    return MINIMAL.replace(
        '"{{ question }}\\nPut the final answer in <answer></answer>."', json.dumps(template)
    )


def test_a_template_bomb_is_a_validation_error_at_its_line(write):
    path = write("t.yaml", spec_with(BOMBS["nested loops"][0]))
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert [str(i) for i in info.value.issues] == [
        "t.yaml:8: prompt.template: more than 100000 steps (loop iterations, calls and filters)"
    ]


def test_a_filter_outside_the_allowed_list_is_named(write):
    with pytest.raises(SpecError) as info:
        load_spec(write("t.yaml", spec_with("{{ question|center(80) }}")))
    (issue,) = info.value.issues
    assert str(issue).startswith(
        "t.yaml:8: prompt.template: filter not allowed on template line 1: 'center' (allowed: abs,"
    )


def test_the_made_up_row_forgives_fields_only_real_rows_have(write):
    spec = load_spec(write("t.yaml", spec_with("{{ row.category|upper }}: {{ question }}")))
    assert spec.prompt.template.startswith("{{ row.category")


def test_validate_renders_the_first_data_row(write, tmp_path):
    rows = [{"problem": "q", "answer": 1, "n": list(range(400))}]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = write("t.yaml", spec_with(
        "{{ row.category }}{% for a in row.n %}{% for b in row.n %}{% endfor %}{% endfor %}"
    ))  # fmt: skip
    load_spec(path)  # the made-up row has neither field
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "t.yaml:8: prompt.template: fails on the first data row (demo-count-0): UndefinedError: "
        "'dict object' has no attribute 'category'",
        "0 of 1 specs valid",
    ]
    path.write_text(path.read_text().replace("{{ row.category }}", ""))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.stdout.splitlines() == [
        "t.yaml:8: prompt.template: fails on the first data row (demo-count-0): more than 100000 "
        "steps (loop iterations, calls and filters)",
        "0 of 1 specs valid",
    ]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=5), children, max_size=5)
    ),
    max_leaves=20,
)


@given(json_values)
def test_text_size_never_underestimates_the_text(value):
    """Refusing a value before turning it into text relies on this bound."""
    assert text_size(value, cap=10**9) >= len(str(value))
