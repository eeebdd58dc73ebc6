"""A spec's values cannot inject anything into the dataset card (``README.md``).

A local data path is any text: here it carries HTML, a newline and a forged heading, a
table row, a remote image and code spans; a tag carries YAML and Markdown. The card's body,
rendered by a CommonMark + GFM table renderer with raw HTML passed through, shows them as
text; its front matter reads them back unchanged.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.eval.test_report_escaping import render_html, visible
from videorl_kit.hub import publish
from videorl_kit.hub.card import parse_front_matter

PATH = (
    "data/<script>alert(1)</script>`x`|y\n# Forged\n| a | b |\n"
    "![p](http://evil.example/p.png)<img src=http://evil.example/i.png>.jsonl"
)
TAG = "x\n---\nlicense: evil\n# <b>tag</b>"


def test_a_hostile_data_path_and_tag_stay_text_in_the_card(tmp_path: Path, task_dir: Path):
    spec = task_dir / "hostile.yaml"
    data = {"include": "_base.yaml", "id": "hostile", "problem_type": "numerical",
            "tags": [TAG], "data": {"path": PATH}}  # fmt: skip
    spec.write_text(yaml.safe_dump(data), encoding="utf-8")
    publish([spec], "my-org/t", dry_run_dir=tmp_path / "out", sample_limit=0)
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    meta = parse_front_matter(card)
    assert meta["license"] != "evil" and TAG in meta["tags"]
    assert meta["videorl_kit"]["specs"][0]["source"] == {"path": PATH}
    body = card.split("\n---\n", 1)[1]
    html = render_html(body)
    assert set(html.tags) <= {"h1", "h2", "p", "table", "thead", "tbody", "tr", "th", "td",
                              "code", "pre"}  # fmt: skip
    assert html.headings == ["my-org/t", "Use"]
    assert html.tables == [[6, 6]]  # the header and one spec row of six cells
    assert f"local file {visible(PATH)} (not uploaded)" in "".join(html.text)
