"""No value reaches the terminal as an escape sequence (issue 19, outsider round 3).

Values printed by the command line come from files others wrote: store rows, data rows,
results and predictions files, specs, model responses. A raw ``ESC ] 52`` (OSC 52: writes
the clipboard), ``ESC [ 2 J`` (clears the screen), a C1 CSI (``\\x9b``) or a bidirectional
override would act on the reader's terminal. Every Rich console of the kit is a
:class:`~videorl_kit.core.terminal.TerminalConsole`, which shows those characters as their
escapes while keeping the kit's own styling, and plain lines go through ``echo`` /
``echo_json``; this file checks the mechanism and that no command bypasses it.
"""

from __future__ import annotations

import ast
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from rich.table import Table
from rich.text import Text
from typer.testing import CliRunner

from videorl_kit.cli import app
from videorl_kit.core.terminal import TerminalConsole, json_for_terminal
from videorl_kit.rewards.text import remove_invisible

REPO = Path(__file__).resolve().parents[1]
ESCAPES = "x\x1b]52;c;cHduZWQ=\x07\x1b[2J\x9b2J\u202e\u2028\U000e0041y"
RAW = {"\x1b", "\x07", "\x9b", "\u202e", "\u2028", "\U000e0041"}
runner = CliRunner()


def _raw(text: str) -> set[str]:
    return RAW & set(text)


def test_no_command_builds_a_plain_rich_console():
    """Every ``Console(...)`` of the kit is a TerminalConsole (core/terminal.py excepted)."""
    found = []
    for path in sorted((REPO / "videorl_kit").rglob("*.py")):
        if path == REPO / "videorl_kit" / "core" / "terminal.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name == "Console":
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not found, "a Rich console that passes escapes through:\n" + "\n".join(found)


# typer.echo / secho arguments that cannot carry a value's control characters: JSON with
# ASCII escapes (json.dumps' default), or the kit's own text.
_KIT_OWN = {"f'videorl-kit {__version__}'", "summary"}


def test_plain_lines_are_json_or_go_through_echo():
    found = []
    for path in sorted((REPO / "videorl_kit").rglob("*.py")):
        if path == REPO / "videorl_kit" / "core" / "terminal.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in ("echo", "secho") or getattr(node.func.value, "id", "") != (
                "typer"
            ):
                continue
            text = ast.unparse(node.args[0]) if node.args else ""
            ascii_json = text.startswith("json.dumps(") and "ensure_ascii=False" not in text
            if not (ascii_json or text in _KIT_OWN or "terminal_text(" in text):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {text}")
    assert not found, "typer.echo of a value: use core.terminal.echo / echo_json\n" + "\n".join(
        found
    )


def test_the_console_escapes_values_and_keeps_its_own_styles():
    buffer = io.StringIO()
    console = TerminalConsole(file=buffer, force_terminal=True, color_system="standard", width=200)
    table = Table(title=f"title {ESCAPES}")
    table.add_column("name", style="bold")
    table.add_row(ESCAPES)
    table.add_row(Text(f"text {ESCAPES}", style="red"))
    console.print(table)
    console.print(f"plain {ESCAPES}", style="green")
    out = buffer.getvalue()
    styles = re.findall(r"\x1b\[([0-9;]*)m", out)  # the kit's styles still reach the terminal
    codes = {code for style in styles for code in style.split(";")}
    assert {"1", "31", "32"} <= codes, styles  # bold column, red text, green line
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert not _raw(plain), repr(plain)
    assert "x\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J\\u009b2J\\u202e\\u2028\\U000e0041y" in plain
    assert "[bold]" in _console_text("[bold]markup[/bold]")  # markup stays literal


def _console_text(value: str) -> str:
    buffer = io.StringIO()
    TerminalConsole(file=buffer, width=120).print(value)
    return buffer.getvalue()


def test_json_for_the_terminal_reads_back_unchanged():
    value = {"response": ESCAPES, "ok": "café 日本 😀", "nl": "a\nb\tc"}
    shown = json_for_terminal(json.dumps(value, ensure_ascii=False, indent=2))
    assert not _raw(shown) and "café 日本 😀" in shown
    assert json.loads(shown) == value


def test_reward_score_json_and_table_show_responses_as_escapes(tmp_path: Path):
    rollouts = tmp_path / "r.jsonl"
    row = {"problem_type": "ocr", "response": f"<answer>{ESCAPES}</answer>", "answer": "x"}
    rollouts.write_text(json.dumps(row) + "\n", encoding="utf-8")
    as_json = runner.invoke(app, ["reward", "score", str(rollouts), "--json"])
    table = runner.invoke(app, ["reward", "score", str(rollouts)], env={"COLUMNS": "400"})
    explained = runner.invoke(
        app, ["reward", "explain", "--type", "ocr", "--response", row["response"],
              "--answer", "x", "--json"],
    )  # fmt: skip
    for result in (as_json, table, explained):
        assert result.exit_code == 0, result.output
        assert not _raw(result.output), repr(result.output)
    (line,) = [json.loads(text) for text in as_json.stdout.splitlines() if text.strip()]
    # the JSON reads back what was graded: the response less the characters that render as
    # nothing (grading removes them; the terminal's escapes are kept and escaped on screen)
    assert line["details"]["extracted"] == remove_invisible(ESCAPES)
    assert json.loads(explained.stdout)


def test_an_error_line_shows_its_values_as_escapes(tmp_path: Path):
    """The one-line error of ``main`` (a UserError naming a path) is escaped too."""
    missing = tmp_path / f"run{ESCAPES}"
    done = subprocess.run(
        [sys.executable, "-m", "videorl_kit", "report", str(missing), "--out", str(tmp_path)],
        capture_output=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1
    err = done.stderr.decode("utf-8", "backslashreplace")
    assert err.startswith("error: ") and "no results.json" in err, err
    assert not _raw(err) and "\\x1b]52" in err, repr(err)


def test_report_prints_its_path_as_escapes(tmp_path: Path):
    """A finished run copied into a folder with escapes in its name: `report` writes the
    report and prints where, escaped."""
    from tests.eval.conftest import write_predictions
    from videorl_kit.eval.runner import EvalConfig, run_eval
    from videorl_kit.eval.tasks import load_tasks

    spec = REPO / "task_specs" / "eval" / "video-mme.yaml"
    tasks = load_tasks([spec], fixture=True)
    gold = write_predictions(tmp_path / "gold.jsonl", tasks)
    run_eval(EvalConfig(specs=[spec], out=tmp_path / "run", backend="replay",
                        predictions=gold, fixture=True))  # fmt: skip
    hostile = tmp_path / f"r{ESCAPES}"
    shutil.copytree(tmp_path / "run", hostile)
    out = tmp_path / f"out{ESCAPES}"
    result = runner.invoke(app, ["report", str(hostile), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "report.md").is_file()
    assert not _raw(result.output) and "\\x1b]52" in result.output, repr(result.output)
