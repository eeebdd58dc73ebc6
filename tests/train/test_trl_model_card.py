"""The model card TRL writes into a run folder shows the folder's name as text.

TRL titles the card it saves at each checkpoint (``README.md``) with the run folder's name.
A folder name is any text: here HTML, a remote image, a link and Markdown emphasis. The card,
rendered by a CommonMark renderer with raw HTML passed through, holds none of them.
"""

from __future__ import annotations

from pathlib import Path

from tests.eval.test_report_escaping import render_html
from tests.train import world
from videorl_kit.adapters.trl import TrlBackend
from videorl_kit.train.plan import plan_training
from videorl_kit.train.run import run_training

NAME = "run <img src=x onerror=alert(1)> ![p](https:evil.example) [a](b) *x* $x^{$"


def test_the_run_folders_name_is_text_in_trls_model_card(train_world: Path, tmp_path: Path):
    family = "qwen2.5-vl"
    recipe = tmp_path / "card.yaml"
    store = train_world / f"store-{family}"
    recipe.write_text(world.recipe_text(family, store, tmp_path / "unused", steps=1,
                                        save_steps=1), encoding="utf-8")  # fmt: skip
    (tmp_path / f"specs-{family}").symlink_to(train_world / f"specs-{family}")
    out = tmp_path / NAME
    run_training(plan_training(recipe, output=out), TrlBackend())
    card = (out / "README.md").read_text(encoding="utf-8")
    html = render_html(card.split("\n---\n", 1)[1])
    assert "img" not in html.tags and "em" not in html.tags
    assert html.links and all(link.startswith("https://") for link in html.links)  # TRL's own
    assert not any("evil" in link for link in html.links)
    assert html.headings[0] == f"Model Card for {NAME}"
