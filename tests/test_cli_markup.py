"""No value printed by the CLI is read as Rich markup (issue 19 §3, outsider round).

Rich reads ``[...]`` in printed text as markup: ``[/b]`` with no open tag raises
``MarkupError`` after the command's work is done, and ``[bold]``/``[link=...]`` change or
drop what is shown. Paths, spec ids, data rows and above all model responses (``reward
explain``) are values a user does not control, so every console of the kit prints text as
it is (``markup=False``) and styles only through ``rich.text.Text``. Terminal escape
sequences in those values (``ESC [2J``, a window title ``ESC ] 0;... BEL``) are shown as
escapes, never sent to the terminal.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from typer.testing import CliRunner

from tests.media_kit import make_video
from tests.store.spec_files import video_rows, write_spec
from videorl_kit.cli import app

runner = CliRunner()
WIDE = {"COLUMNS": "2000"}  # no table cell wraps
REPO = Path(__file__).resolve().parents[1]
HOSTILE = "[/b][bold]x[/bold][link=https://evil.example]y[/link][red"


def invoke(*args: str) -> str:
    """Run the CLI; it must succeed, and its output must not be a traceback."""
    result = runner.invoke(app, list(args), env=WIDE)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0, result.output
    return result.output


def test_every_console_of_the_kit_prints_text_as_it_is():
    """Each ``Console(...)`` passes ``markup=False``; no ``print`` turns markup back on."""
    found = []
    for path in sorted((REPO / "videorl_kit").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            markup = {k.arg: k.value for k in node.keywords}.get("markup")
            off = isinstance(markup, ast.Constant) and markup.value is False
            on = isinstance(markup, ast.Constant) and markup.value is True
            if (name == "Console" and not off) or on:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not found, "markup read from printed text at:\n" + "\n".join(found)


def test_reward_explain_shows_a_hostile_response_as_written():
    response = f"<answer>{HOSTILE} A</answer>"
    output = invoke("reward", "explain", "--type", "mcq", "--response", response, "--answer", "A")
    assert response in output
    assert f"'{HOSTILE} A' (from answer_tag)" in output


def test_reward_score_shows_hostile_lines_as_written(tmp_path: Path):
    folder = tmp_path / f"out{HOSTILE}"
    folder.mkdir(parents=True)
    rollouts = folder / "r.jsonl"
    rows = [
        {"problem_type": "multiple_choice", "response": f"<answer>{HOSTILE}</answer>",
         "answer": "A"},
        {"problem_type": HOSTILE, "response": "<answer>A</answer>", "answer": "A"},
    ]  # fmt: skip
    rollouts.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    output = invoke("reward", "score", str(rollouts), "--out", str(folder / "s.jsonl"))
    assert f"rewards for {rollouts}" in output
    assert f"wrote 2 results to {folder / 's.jsonl'}" in output
    assert HOSTILE[:20] in output


def test_spec_store_and_synth_commands_show_hostile_paths_as_written(tmp_path: Path):
    root = tmp_path / f"work{HOSTILE}"
    (root / f"v{HOSTILE}.mp4").parent.mkdir(parents=True)
    make_video(root / f"v{HOSTILE}.mp4", 6, 5, (64, 48), seed=1)
    spec = write_spec(root, "markup-task", video_rows([f"v{HOSTILE}.mp4"]))
    broken = root / "broken.yaml"
    broken.write_text(f"id: {json.dumps(HOSTILE)}\nversion: 1\n", encoding="utf-8")

    output = invoke("validate", str(spec))
    assert str(spec) in output or "1 of 1 specs valid" in output
    listing = runner.invoke(app, ["ls", str(root)], env=WIDE)
    assert listing.exception is None or isinstance(listing.exception, SystemExit)
    assert "INVALID" in listing.output and "markup-task" in listing.output
    assert str(broken) in listing.output
    assert "markup-task" in invoke("show", str(spec))

    store = root / "store"
    invoke("build-cache", str(spec), "--store", str(store))
    assert str(store) in invoke("cache", "status", "--store", str(store))
    verified = invoke("cache", "verify", "--store", str(store))
    assert f"verify {store}" in verified and "ok" in verified

    synth = root / "synth"
    assert f"synthetic suite in {synth}" in invoke(
        "synth", str(synth), "--n", "1", "--task", "count"
    )


ESCAPES = "a\x1b[2J\x1b]0;pwned\x07b\rc\u202ed"
SHOWN = "a\\x1b[2J\\x1b]0;pwned\\x07b\\rc\\u202ed"


def test_model_responses_and_rows_reach_no_terminal_escape(tmp_path: Path):
    response = f"<answer>{ESCAPES}</answer>"
    explained = invoke(
        "reward", "explain", "--type", "ocr", "--response", response, "--answer", "x"
    )
    assert f"<answer>{SHOWN}</answer>" in explained
    rollouts = tmp_path / "r.jsonl"
    row = {"problem_type": "ocr", "response": response, "answer": "x"}
    rollouts.write_text(json.dumps(row) + "\n", encoding="utf-8")
    scored = invoke("reward", "score", str(rollouts))
    root = tmp_path / "spec"
    make_video(root / "v.mp4", 6, 5, (64, 48), seed=1)
    rows = video_rows(["v.mp4"], question=f"Q {ESCAPES}")
    rows[0]["answer"] = f"7 {ESCAPES}"
    shown = invoke("show", str(write_spec(root, "escape-task", rows)))
    assert f"answer: 7 {SHOWN}" in shown and f"Q {SHOWN}" in shown
    for output in (explained, scored, shown):
        assert not {"\x1b", "\x07", "\r", "\u202e"} & set(output), output
