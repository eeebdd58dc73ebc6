"""A results file cannot inject anything into ``report.md`` or stop its charts.

Every string of a real run's ``results.json`` (model name, task ids, benchmark, group, metric
and category names, variant, versions, the run folder's own name) is replaced by a hostile
value: HTML tags, a newline that would start a heading or a table row, a remote image, a
link, code spans, emphasis, maths. The report is then rendered to HTML by a CommonMark + GFM
table renderer with raw HTML passed through (as a Markdown viewer sees it) and checked: no
tag, heading, row, link or image of the values survives, the values read back as text.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.eval.conftest import ROOT, write_predictions
from videorl_kit.core.safe_text import markdown_code, markdown_text
from videorl_kit.eval.report import render_report
from videorl_kit.eval.runner import EvalConfig, run_eval
from videorl_kit.eval.tasks import load_tasks

SPEC = ROOT / "task_specs" / "eval" / "video-mme.yaml"

ATTACK = (
    "<script>alert(1)</script>\n# Forged heading\n| forged | row |\n"
    "![pixel](http://evil.example/p.png)<img src=http://evil.example/a.png> "
    "[click](http://evil.example) `code` *em* _em_ ~~gone~~ $x^{$ &amp; <!-- c --> \u202e"
)


def visible(value: str) -> str:
    """How a value reads in the rendered report: control characters shown as escapes."""
    return "".join(
        ch if ch.isprintable() else repr(ch)[1:-1] if ch.isascii() else f"\\u{ord(ch):04x}"
        for ch in value
    )


def hostile(name: str) -> str:
    """A distinct hostile value per field (so each can be found in the output)."""
    return f"{name}{ATTACK}"


class Html(HTMLParser):
    """The tags, headings, table rows, image sources, links and text of rendered HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.images: list[str] = []
        self.links: list[str] = []
        self.headings: list[str] = []
        self.rows: list[int] = []
        self.tables: list[list[int]] = []
        self.text: list[str] = []
        self._heading: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "img":
            self.images.append(dict(attrs).get("src") or "")
        if tag == "a":
            self.links.append(dict(attrs).get("href") or "")
        if tag in {"h1", "h2", "h3", "h4", "h5", "h6"}:
            self._heading = []
        if tag == "table":
            self.tables.append([])
        if tag == "tr":
            self.rows.append(0)
            self.tables[-1].append(0)
        if tag in {"td", "th"}:
            self.rows[-1] += 1
            self.tables[-1][-1] += 1

    def handle_endtag(self, tag: str) -> None:
        if tag.startswith("h") and tag[1:].isdigit() and self._heading is not None:
            self.headings.append("".join(self._heading))
            self._heading = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._heading is not None:
            self._heading.append(data)

    def handle_comment(self, data: str) -> None:
        self.tags.append("!--")


def render_html(markdown: str) -> Html:
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    parsed = Html()
    parsed.feed(html)
    return parsed


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory) -> Path:
    """A real replay run of Video-MME's fixture whose results carry hostile strings."""
    root = tmp_path_factory.mktemp("hostile")
    tasks = load_tasks([SPEC], fixture=True)
    predictions = write_predictions(root / "gold.jsonl", tasks)
    folder = root / "run <img src=http://evil.example/f.png> $x^{$ [a](b)"
    run_eval(EvalConfig(specs=[SPEC], out=folder, backend="replay", predictions=predictions,
                        fixture=True))  # fmt: skip
    data = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    data["model"]["name"] = hostile("model")
    data["model"]["fingerprint"] = hostile("fp")
    data["run"]["variant"] = hostile("variant")
    data["run"]["finished_at"] = hostile("at")
    data["run"]["kit_version"] = hostile("kit")
    data["run"]["git"] = {"hash": hostile("git")}
    (task,) = data["tasks"].values()
    task_id = hostile("task")
    task["task_id"] = task_id
    task["benchmark"] = hostile("bench")
    task["group"] = hostile("group")
    metric = hostile("metric")
    task["metrics"] = {metric: task["metrics"][task["primary_metric"]]}
    task["primary_metric"] = metric
    task["categories"] = {
        hostile("column"): [{**row, "value": hostile(f"value{i}")}
                            for i, row in enumerate(next(iter(task["categories"].values())))]
    }  # fmt: skip
    task["n_error"] = 1  # a warning line naming the task
    task["data"]["source_verified"] = False  # and another
    task["notes"] = [hostile("note")]
    data["tasks"] = {task_id: task}
    (folder / "results.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_no_value_of_a_results_file_becomes_markdown_or_html(hostile_run, tmp_path):
    out = tmp_path / "report"
    text = render_report([hostile_run, hostile_run], out).read_text(encoding="utf-8")
    html = render_html(text)
    allowed = {"h1", "h2", "h3", "p", "table", "thead", "tbody", "tr", "th", "td", "img", "code",
               "ul", "li"}  # fmt: skip
    assert set(html.tags) <= allowed, set(html.tags) - allowed  # no script, a, em, comment...
    assert html.images and all(src.endswith(".png") and (out / src).is_file()
                               for src in html.images)  # fmt: skip
    assert not any(src.startswith(("http", "//")) for src in html.images)
    task = next(iter(json.loads((hostile_run / "results.json").read_text())["tasks"].values()))
    column = next(iter(task["categories"]))
    assert html.headings == [
        "Evaluation report", "Runs", "Scores",
        visible(f"{task['benchmark']} ({task['task_id']})"), visible(f"By {column}"), "Warnings",
    ]  # fmt: skip
    assert len(html.tables) == 4  # runs, scores, metrics, the category
    assert all(len(set(table)) == 1 for table in html.tables), html.tables  # no forged cell
    shown = "".join(html.text)
    for value in (task["benchmark"], task["group"], task["primary_metric"], column,
                  task["categories"][column][0]["value"], hostile("model")):  # fmt: skip
        assert visible(value) in shown  # read back as text, newlines visible
    assert "Forged heading" not in html.headings
    assert "\n# " not in text and "<script" not in text and "<img" not in text


def test_charts_draw_hostile_names_as_text(hostile_run, tmp_path):
    render_report([hostile_run], tmp_path / "report")  # `$x^{$` is no maths: no error
    assert list((tmp_path / "report").glob("categories_*.png"))


@pytest.mark.parametrize(
    "value",
    ["# h", "1. item", "- item", "+ item", "= setext", "> quote", "a\nb", "a\r\nb", "x\u2028y",
     "<b>", "&lt;", "`", "``a``", "a | b", "\\|", "[a](http://e)", "![i](http://e/i.png)",
     "<http://e>", "*a*", "__a__", "~~a~~", "$a$", "    code", "a  \nb", "\\", "\u202e\u2066"],
)  # fmt: skip
def test_any_value_reads_back_as_one_text_run(value):
    """``markdown_text`` and ``markdown_code`` in a table cell, a heading and a list item."""
    for shown in (markdown_text(value), markdown_code(value)):
        document = f"## {shown}\n\n- {shown}\n\n| a | b |\n|---|---|\n| {shown} | x |\n"
        html = render_html(document)
        assert set(html.tags) <= {"h2", "ul", "li", "table", "thead", "tbody", "tr", "th", "td",
                                  "code"}  # fmt: skip
        assert html.rows == [2, 2] and len(html.headings) == 1
        assert html.headings[0].strip() == visible(value).strip()
