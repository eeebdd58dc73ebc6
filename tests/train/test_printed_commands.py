"""Every command the kit prints or writes for a user to paste (``train --plan``'s missing
items and launch lines, ``plan.json``, ``train --dry-run``'s launch line, ``plot it:``) is
shell-quoted: pasted into bash with hostile paths in every position (the project folder, so
the recipe and spec paths; the store; the run folder; a model folder; a Hub data file), it
runs only the program it names, with the values as data."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from huggingface_hub import constants as hub_constants
from typer.testing import CliRunner

from tests.train import world
from videorl_kit.cli import app
from videorl_kit.train.commands import _print_report
from videorl_kit.train.run import RunReport

HOSTILE = "q'\"$(touch m1)`touch m2`;touch m3&&touch m4|touch m5>m6 #"
"""Quotes, command substitution, backticks, separators, a redirection and a comment."""
HUB_FILE = f"--local-dir=x {HOSTILE}"
"""A Hub data file named like an option of ``hf download``."""
PROGRAMS = ("videorl-kit", "hf", "ray", "accelerate")
ONE_GPU = "openrlhf: {nodes: 1, gpus_per_node: 1, vllm_engines: 1, video: native}\n"
runner = CliRunner()


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No network and an empty Hub cache (nothing is found or fetched)."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    monkeypatch.delenv("WORLD_SIZE", raising=False)


def paste(command: str, tmp_path: Path) -> tuple[list[str], list[str]]:
    """Run ``command`` in bash in an empty folder, with stand-ins for the kit's programs first
    on PATH (each logs its argv as JSON). Returns (the argvs they got, what the folder holds)."""
    fakes, log = tmp_path / "fakebin", tmp_path / "argv.log"
    fakes.mkdir(exist_ok=True)
    for name in PROGRAMS:
        program = fakes / name
        program.write_text(
            "#!/usr/bin/env python3\nimport json, sys\n"
            f"open({str(log)!r}, 'a').write(json.dumps(sys.argv) + '\\n')\n"
        )
        program.chmod(0o755)
    work = tmp_path / "paste"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    log.unlink(missing_ok=True)
    env = dict(os.environ, PATH=f"{fakes}:{os.environ['PATH']}")
    subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, timeout=60)
    calls = log.read_text().splitlines() if log.exists() else []
    return calls, sorted(p.name for p in work.iterdir())


def _project(tmp_path: Path, train_world: Path) -> tuple[Path, Path]:
    """A project folder with a hostile name: the world's qwen2.5-vl specs, a spec over a Hub
    data file with a hostile name, and a recipe (store not built, output in the project)."""
    project = tmp_path / f"proj {HOSTILE}"
    project.mkdir()
    (project / "synth").symlink_to(train_world / "synth")
    world.write_specs(project, "qwen2.5-vl")
    hub = world.spec_text("from-hub", "numerical", "synth/count.jsonl", 28).replace(
        "data: {path: synth/count.jsonl,",
        f"data: {{hub: {{repo: org/name, revision: main, file: {json.dumps(HUB_FILE)}}},",
    )
    (project / "specs-qwen2.5-vl" / "from-hub.yaml").write_text(hub)
    recipe = project / "recipe.yaml"
    text = world.recipe_text("qwen2.5-vl", Path("STORE"), Path("OUT"))
    text = text.replace("store: STORE", f"store: {json.dumps(f'store {HOSTILE}')}")
    text = text.replace("output_dir: OUT", f"output_dir: {json.dumps('runs/x')}")
    recipe.write_text(text + ONE_GPU)
    return project, recipe


def _runnable(command: str) -> str:
    """The part of a missing item's command a user pastes (before ``, then`` prose)."""
    return command.split(", then ")[0]


@pytest.mark.parametrize("backend", ["openrlhf", "trl"])
def test_plan_commands_run_only_the_program_they_name(
    offline: None, train_world: Path, tmp_path: Path, backend: str
) -> None:
    project, recipe = _project(tmp_path, train_world)
    output = project / f"runs {HOSTILE}"
    model = project / f"model {HOSTILE}"
    result = runner.invoke(app, ["train", str(recipe), "--plan", "--json", "--backend", backend,
                                 "--output", str(output), "--model", str(model)])  # fmt: skip
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan == json.loads((output / "plan.json").read_text())  # plan.json: the same commands
    commands = [_runnable(item["command"]) for item in plan["missing"]]
    commands += [v for k, v in plan["launch"].items() if k in ("write_bundle", "submit", "command")]
    pasted = [c for c in commands if c.split(" ", 1)[0] in (*PROGRAMS, "bash")]
    programs = {c.split(" ", 1)[0] for c in pasted}
    assert {"videorl-kit", "hf"} <= programs, commands  # build-cache, hf download (data, model)
    prose = [c for c in commands if c not in pasted]
    assert all(c.startswith("put the data file in place") for c in prose), prose
    for command in pasted:
        calls, made = paste(command, tmp_path)
        assert made == [], (command, made)  # nothing ran: no marker file
        if not command.startswith("bash "):
            [argv] = calls
            assert json.loads(argv)[1:] == shlex.split(command)[1:], command
    build = next(c for c in pasted if " build-cache " in c)
    words = shlex.split(build)
    assert str(project / "store") + f" {HOSTILE}" in words, words  # the path, one word
    assert any(w.startswith(str(project / "specs-qwen2.5-vl")) for w in words), words
    download = next(c for c in pasted if c.startswith("hf download org/name"))
    assert shlex.split(download)[-2:] == ["--", HUB_FILE]  # the Hub file: one word, no option


def test_dry_run_launch_line_runs_only_the_launch_script(train_world: Path, tmp_path: Path) -> None:
    recipe = tmp_path / "recipe.yaml"
    store = train_world / "store-qwen2.5-vl"
    (tmp_path / "specs-qwen2.5-vl").symlink_to(train_world / "specs-qwen2.5-vl")
    text = world.recipe_text("qwen2.5-vl", store, Path("runs/x"))
    recipe.write_text(text + ONE_GPU)
    output = tmp_path / f"out {HOSTILE}"
    result = runner.invoke(app, ["train", str(recipe), "--backend", "openrlhf", "--dry-run",
                                 "--output", str(output)])  # fmt: skip
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout[result.stdout.index("{") : result.stdout.rindex("}") + 1])
    launch = printed["launch"]
    assert shlex.split(launch) == ["bash", str(output / "launch.sh")]
    calls, made = paste(launch, tmp_path)
    assert made == [] and calls, (launch, made)  # the script ran (the stand-in ray), nothing else


def test_plot_it_line_quotes_the_run_folder(capsys: pytest.CaptureFixture[str]) -> None:
    run = Path(f"/runs/{HOSTILE}")
    _print_report(RunReport(run, {}, trained=True), dry_run=False)
    [line] = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("plot it: ")]
    assert shlex.split(line.removeprefix("plot it: ")) == ["videorl-kit", "plot", str(run)]


@pytest.mark.parametrize("backend", ["openrlhf", "trl"])
def test_a_recipe_path_that_starts_with_a_dash_stays_a_path(
    offline: None, train_world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    project, recipe = _project(tmp_path, train_world)
    recipe.rename(project / "-r.yaml")
    monkeypatch.chdir(project)
    plan = json.loads(
        runner.invoke(app, ["train", "./-r.yaml", "--plan", "--json", "--backend", backend]).stdout
    )
    launch = plan["launch"].get("write_bundle") or plan["launch"]["command"]
    assert shlex.split(launch)[:3] == ["videorl-kit", "train", "./-r.yaml"], launch
