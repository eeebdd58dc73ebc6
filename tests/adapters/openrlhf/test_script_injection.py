"""No recipe value, path or argv word runs a command through a bundle's ``launch.sh``.

``launch.sh`` is run with ``bash`` for real, with harmless stand-ins on ``PATH``: ``ray`` is
Ray's own ``ray job`` command-line code (its parsing, its join of the entrypoint words: with
``subprocess.list2cmdline`` in Ray 2.55, which OpenRLHF 0.11.2 pins, and ``shlex.join`` since
2.60 except on Windows; both are run) with a client that, like Ray's job supervisor, runs the
entrypoint with ``/bin/sh``; ``python`` is this interpreter; ``openrlhf.cli.train_ppo_ray`` only records the
argv it gets. Every hostile value (command substitution, backticks, ``;``, ``&&``, quotes,
globs, newlines) carries a ``touch`` of a canary file: none may appear, and OpenRLHF must get
exactly the bundle's argv.

Recipe validation refuses, with one line naming the field, what no quoting makes right:
control characters, a Ray address that is no address, and (OpenRLHF) a bundle folder whose
path holds ``,`` or ``@``, which OpenRLHF's own dataset code misreads.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.adapters.openrlhf.conftest import require_openrlhf
from tests.adapters.openrlhf.test_bundle import argv_of, recipe_variant
from videorl_kit.adapters.openrlhf import job_entry
from videorl_kit.adapters.openrlhf.launch import write_launch_files
from videorl_kit.cli import app
from videorl_kit.core.errors import UserError

runner = CliRunner()
REPO = Path(__file__).resolve().parents[3]

RAY_STAND_IN = """
import json, os, subprocess, sys
from pathlib import Path

import ray.dashboard.modules.job.cli as job_cli


class Cluster:
    '''A Ray cluster's job API: it records the job and runs its entrypoint as Ray's job
    supervisor does, with subprocess.Popen(entrypoint, shell=True).'''

    def __init__(self, address):
        self.address = address

    def submit_job(self, *, entrypoint, runtime_env=None, **_):
        record = {"address": self.address, "entrypoint": entrypoint, "runtime_env": runtime_env}
        Path(os.environ["STAND_IN_RECORD"], "ray.json").write_text(json.dumps(record))
        subprocess.run(entrypoint, shell=True, check=True)
        return "raysubmit_stand_in"

    def get_version(self):
        return "0"  # a cluster without log streaming: the CLI returns after submitting


job_cli._get_sdk_client = lambda address, **_: Cluster(address)
if os.environ.get("STAND_IN_RAY_JOIN") == "list2cmdline":  # as Ray <= 2.55 on every platform
    import types

    job_cli.shlex = types.SimpleNamespace(join=subprocess.list2cmdline)
    job_cli.sys = types.SimpleNamespace(platform="win32")
assert sys.argv[1] == "job", sys.argv
job_cli.job_cli_group.main(sys.argv[2:], prog_name="ray job", standalone_mode=False)
"""

OPENRLHF_STAND_IN = """
import json, os, sys
from pathlib import Path

Path(os.environ["STAND_IN_RECORD"], "openrlhf.json").write_text(json.dumps(sys.argv[1:]))
"""


def canaries(folder: Path) -> list[str]:
    """Hostile words, each of which creates a file in ``folder`` if a shell ever runs it."""
    c = folder
    return [
        f"$(touch {c}/subst)", f"`touch {c}/backtick`", f"x; touch {c}/semicolon",
        f"x && touch {c}/and", f"x | touch {c}/pipe", f"x\ntouch {c}/newline\n",
        f"'; touch {c}/single; '", f'"; touch {c}/double; "', f"$(touch {c}/sub2)$HOME${{PATH}}",
        "*", "?[a]*", "~", "!", "#", "a b\tc", "", "--flag=$(id)", "\\", "%PATH% ^& x",
    ]  # fmt: skip


@pytest.fixture(params=["ray", "list2cmdline"])
def stand_ins(request, tmp_path: Path) -> tuple[dict[str, str], Path, Path]:
    """``PATH``/``PYTHONPATH`` with the stand-ins; the record folder; the canary folder."""
    bin_dir, lib_dir = tmp_path / "stand-in-bin", tmp_path / "stand-in-lib"
    record, canary = tmp_path / "record", tmp_path / "canary"
    for folder in (bin_dir, lib_dir / "openrlhf" / "cli", record, canary):
        folder.mkdir(parents=True)
    ray = bin_dir / "ray"
    ray.write_text(f"#!{sys.executable}\n{RAY_STAND_IN}", encoding="utf-8")
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n', encoding="utf-8")
    for script in (ray, python):
        script.chmod(0o755)
    for init in (lib_dir / "openrlhf", lib_dir / "openrlhf" / "cli"):
        (init / "__init__.py").write_text("", encoding="utf-8")
    (lib_dir / "openrlhf" / "cli" / "train_ppo_ray.py").write_text(OPENRLHF_STAND_IN, "utf-8")
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "PYTHONPATH": f"{lib_dir}:{REPO}",
        "STAND_IN_RECORD": str(record),
        "HOME": str(tmp_path),
        "STAND_IN_RAY_JOIN": request.param,
    }
    return env, record, canary


def run_launch(script: Path, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    cwd.mkdir(exist_ok=True)
    done = subprocess.run(["bash", str(script)], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done


def test_ray_submits_entrypoint_words_through_windows_quoting_and_a_shell():
    """What the stand-in for ``ray`` relies on, read from Ray's own source."""
    import inspect

    import ray.dashboard.modules.job.cli as job_cli
    import ray.dashboard.modules.job.job_supervisor as supervisor

    assert "list2cmdline(entrypoint)" in inspect.getsource(job_cli.submit.callback)
    assert "shell=True" in inspect.getsource(supervisor.JobSupervisor._exec_entrypoint)


def test_no_value_in_a_launch_script_runs_a_command(stand_ins, tmp_path):
    env, record, canary = stand_ins
    words = canaries(canary)
    bundle = tmp_path / f"bundle {words[0]} {words[1]};'\"*?" / f"run{words[5]}x"
    bundle.mkdir(parents=True)
    (bundle / "runtime_env.json").write_text("{}", encoding="utf-8")
    argv = ["--actor.model_name_or_path", *words, "--data.input_template", "Q: {} $(id)"]
    address = f"http://127.0.0.1:8265/{words[0]}{words[2]}"
    script = write_launch_files(bundle, argv, address, native_video=True)
    subprocess.run(["bash", "-n", str(script)], check=True)  # the script parses
    run_launch(script, env, tmp_path / "cwd")
    assert json.loads((record / "openrlhf.json").read_text()) == argv  # exactly, as a list
    submitted = json.loads((record / "ray.json").read_text())
    assert submitted["address"] == address
    assert submitted["entrypoint"].split()[:3] == ["python", "-m", job_entry.MODULE]
    assert json.loads((bundle / "runtime_env.json").read_text())["py_modules"] == [
        str(bundle / "kit" / "videorl_kit")
    ]
    assert sorted(p.name for p in canary.iterdir()) == []
    assert not list((tmp_path / "cwd").iterdir())

    hostile_env = {**env, "RAY_ADDRESS": f"http://10.0.0.1:8265/{words[0]}"}
    run_launch(script, hostile_env, tmp_path / "cwd")  # the user's own variable: one word
    assert json.loads((record / "ray.json").read_text())["address"] == hostile_env["RAY_ADDRESS"]
    assert sorted(p.name for p in canary.iterdir()) == []


def test_comments_of_the_script_keep_every_value_on_its_line(stand_ins, tmp_path):
    env, record, _ = stand_ins
    bundle = tmp_path / "a\nexit 7\n" / "b\rc\u2028d"
    bundle.mkdir(parents=True)
    script = write_launch_files(bundle, ["--x"], "http://127.0.0.1:8265", native_video=False)
    header = script.read_text(encoding="utf-8").split("set -euo pipefail")[0].split("\n")
    assert all(line.startswith("#") for line in header if line)  # no value left its comment
    shown = str(bundle).replace("\n", "\\n").replace("\r", "\\r").replace("\u2028", "\\u2028")
    assert f"# Train with OpenRLHF on a Ray cluster: the run bundle in '{shown}'" in header
    run_launch(script, env, tmp_path / "cwd")  # `exit 7` never runs
    assert json.loads((record / "openrlhf.json").read_text()) == ["--x"]


def test_a_bundle_written_by_train_runs_no_value_of_its_recipe(workspace, stand_ins, tmp_path):
    env, record, canary = stand_ins
    words = canaries(canary)
    recipe = recipe_variant(
        workspace, "hostile-values",
        openrlhf={"video": "native", "extra_args": {"--logger.wandb.group": words[0],
                                                    "--data.input_template": words[1]}},
    )  # fmt: skip
    out = tmp_path / "runs" / f"out {words[0]} {words[1]} {words[2]} '\"*?[x][/b]"
    result = runner.invoke(app, ["train", str(recipe), "--backend", "openrlhf", "--dry-run",
                                 "--output", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    run_launch(out / "launch.sh", env, tmp_path / "cwd")
    assert json.loads((record / "openrlhf.json").read_text()) == argv_of(out)
    assert str(out / "agent_func.py") in argv_of(out) and words[0] in argv_of(out)
    assert sorted(p.name for p in canary.iterdir()) == []
    for module in ("reward_func.py", "agent_func.py"):  # Python literals, read back exactly
        tree = ast.parse((out / module).read_text(encoding="utf-8"))
        values = {
            node.targets[0].id: ast.literal_eval(node.value)
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        }
        expected = {"RECIPE": "hostile-values", "TASKS_FILE": str(out / "tasks.resolved.json")}
        if module == "agent_func.py":
            expected["OFFLINE_FILE"] = None  # the recipe mixes no offline trajectories
        assert values == expected


HOSTILE_RECIPES = [
    ({"openrlhf": {"ray_address": "http://127.0.0.1:8265$(touch FILE)"}}, "openrlhf.ray_address",
     "is not a Ray address"),
    ({"openrlhf": {"ray_address": "http://u:p@head:8265"}}, "openrlhf.ray_address",
     "not a Ray address"),
    ({"openrlhf": {"ray_address": "head node:8265"}}, "openrlhf.ray_address", "not a Ray address"),
    ({"output_dir": "../runs/a\ntouch FILE"}, "output_dir", "control character (\\n)"),
    ({"output_dir": "../runs/a,b", "backend": "openrlhf"}, "output_dir", "holds ','"),
    ({"output_dir": "../runs/a@b", "backend": "openrlhf"}, "output_dir", "holds '@'"),
    ({"model": "tiny:qwen2.5-vl\r"}, "model", "control character (\\r)"),
    ({"store": "../store\u202e"}, "store", "control character (\\u202e)"),
    ({"tasks": ["../task_specs/tiny/tiny-count.yaml\x1b[2J"]}, "tasks.0.spec",
     "control character (\\x1b)"),
    ({"openrlhf": {"extra_args": {"--logger.wandb.group": "a\nb"}}}, "openrlhf.extra_args",
     "control character (\\n)"),
    ({"logging": {"wandb_project": "p\u2028q"}}, "logging.wandb_project",
     "control character (\\u2028)"),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "field", "message"), HOSTILE_RECIPES)
def test_validate_refuses_a_value_no_script_can_hold(workspace, changes, field, message):
    recipe = recipe_variant(workspace, "hostile", **changes)
    result = runner.invoke(app, ["validate", str(recipe)])
    assert result.exit_code == 1, result.output
    problems = [line for line in result.output.splitlines() if line.startswith(str(recipe))]
    assert len(problems) == 1, result.output
    assert f": {field}: " in problems[0] and message in problems[0], problems[0]
    assert "\n" not in problems[0]


def test_a_comma_or_at_is_fine_for_trl_and_refused_by_train_for_openrlhf(workspace, tmp_path):
    recipe = recipe_variant(workspace, "comma-trl", output_dir="../runs/a,b@c")
    assert runner.invoke(app, ["validate", str(recipe)]).exit_code == 0
    result = runner.invoke(app, ["validate", str(recipe)])  # the recipe's backend: trl
    assert result.exit_code == 0
    out = tmp_path / "x,y"
    result = runner.invoke(app, ["train", str(recipe), "--backend", "openrlhf", "--dry-run",
                                 "--output", str(out)])  # fmt: skip
    assert isinstance(result.exception, UserError), result.output
    assert str(result.exception).startswith(f"the bundle folder {out} holds ','")
    assert not out.exists()  # refused before anything is written


def test_openrlhfs_dataset_code_misreads_a_bundle_path_with_a_comma_or_at(tmp_path):
    """Why the kit refuses those paths: OpenRLHF 0.11.2's own ``blending_datasets``."""
    require_openrlhf()
    from types import SimpleNamespace

    from openrlhf.datasets.utils import blending_datasets

    strategy = SimpleNamespace(print=lambda *a: None, is_rank_0=lambda: False,
                               args=SimpleNamespace(use_ms=False))  # fmt: skip
    for name in ("a,b", "a@b"):
        prompts = tmp_path / name / "train.t.jsonl"
        prompts.parent.mkdir()
        prompts.write_text(json.dumps({"prompt": "p", "label": "l"}) + "\n", encoding="utf-8")
        ok = tmp_path / "plain" / "train.t.jsonl"
        ok.parent.mkdir(exist_ok=True)
        ok.write_text(prompts.read_text(), encoding="utf-8")
        assert len(blending_datasets(str(ok), "1.0", strategy)) == 1
        with pytest.raises(Exception):  # noqa: B017 - any failure: the path is misread
            blending_datasets(str(prompts), "1.0", strategy)


def test_the_job_entry_reads_a_plain_or_encoded_argv_path(tmp_path):
    for folder in ("plain", "with space $(x) 'q'\nnl"):
        path = tmp_path / folder / "argv.json"
        path.parent.mkdir()
        path.write_text(json.dumps(["--a", "$(x)"]), encoding="utf-8")
        token = job_entry.argv_token(path)
        assert job_entry.argv_file(token) == path
        assert token == str(path) or set(token[4:]) <= set(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_="
        )
        assert job_entry.read_argv(job_entry.argv_file(token)) == ["--a", "$(x)"]
    (tmp_path / "bad.json").write_text('{"a": 1}', encoding="utf-8")
    with pytest.raises(UserError, match=r"bad\.json: the job's argv must be a JSON list"):
        job_entry.read_argv(tmp_path / "bad.json")


def test_the_bundle_records_values_as_data_not_code(workspace, tmp_path):
    """``argv.json``, ``runtime_env.json`` and ``recipe.resolved.yaml`` read back exactly."""
    out = tmp_path / "runs" / "q'\"$(x)`y`"
    recipe = recipe_variant(
        workspace, "hostile-data", openrlhf={"extra_args": {"--logger.wandb.group": "$(touch z)"}}
    )
    result = runner.invoke(app, ["train", str(recipe), "--backend", "openrlhf", "--dry-run",
                                 "--output", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    resolved = yaml.safe_load((out / "recipe.resolved.yaml").read_text(encoding="utf-8"))
    assert resolved["openrlhf"]["extra_args"] == {"--logger.wandb.group": "$(touch z)"}
    assert resolved["output_dir"] == str(out)
    env = json.loads((out / "runtime_env.json").read_text(encoding="utf-8"))
    assert env["py_modules"] == [os.fspath(out / "kit" / "videorl_kit")]


def test_the_job_entry_logs_argv_with_control_characters_escaped(tmp_path):
    """The job log is read on a terminal: an escape sequence in a value is shown, not run;
    OpenRLHF still gets the value unchanged."""
    lib, record = tmp_path / "lib", tmp_path / "record"
    (lib / "openrlhf" / "cli").mkdir(parents=True)
    record.mkdir()
    for init in (lib / "openrlhf", lib / "openrlhf" / "cli"):
        (init / "__init__.py").write_text("", encoding="utf-8")
    (lib / "openrlhf" / "cli" / "train_ppo_ray.py").write_text(OPENRLHF_STAND_IN, "utf-8")
    argv = ["--logger.wandb.group", "a\x1b[2J\x1b]0;title\x07b\nc"]
    (tmp_path / "argv.json").write_text(json.dumps(argv), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": f"{lib}:{REPO}", "STAND_IN_RECORD": str(record)}
    done = subprocess.run([sys.executable, "-m", job_entry.MODULE, str(tmp_path / "argv.json")],
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads((record / "openrlhf.json").read_text()) == argv
    assert done.stdout.count("\n") == 1 and "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "a\\x1b[2J\\x1b]0;title\\x07b\\nc" in done.stdout
