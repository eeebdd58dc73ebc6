"""Outsider red-team, round 4 (issue 19, sections 3 and 4): siblings round 3 did not try.

Written through the public surface only (the ``videorl-kit`` command line, ``FrameStore`` and
the files the kit writes), by someone who had not read the implementation. Each test asserts
the SAFE behaviour. A test marked ``xfail(strict=True)`` is a hole found on the commit it was
written against (its reason says what happened); the fixer removes the mark. Unmarked tests
are attacks the kit held; they stay as regression tests.

Families tried here:

* commands the kit prints for the user to paste *inside error messages* (repair and rebuild
  hints), not only in ``--plan`` / ``--dry-run`` output;
* output folders that already hold a symbolic link (``plan.json``, a bundle's ``launch.sh`` or
  ``data/``, ``report.md``, an export's ``frames/``): the kit must not write outside the folder;
* values no quoting makes right but that must still be one line, not a traceback: a path
  component longer than the file system allows, a ``WORLD_SIZE`` that is not a count;
* hostile JSON (very deep, huge numbers, duplicated keys) in results files and trajectory rows;
* special files in a store (the version record, a table's manifest) and two writers at once.

Holes found on commit 3d798e6 (each was a strict xfail; fixed in the same branch unless said):
repair/rebuild hints printed the store path unquoted (cache status, verify, export, train,
repair's report); plan.json, a dry-run bundle (launch.sh, data/, media/), report.md and its
PNGs, cache export's frames/ and eval's samples_<task>.jsonl.partial were written through links
placed in the output folder; an over-long path component, an output path that is a file and a
WORLD_SIZE that is not a count were tracebacks; a JSON line nested 100,000 deep was a
RecursionError traceback (trajectories import, inspect, plot, eval replay); a results.json
repeating a key was read silently; a FIFO or /dev/zero as the version record, or a FIFO
manifest, hung every open of the store; a Hub data file or split could hold a newline; the
plan's launch commands dropped --store/--output/--max-steps; two builds creating one store at
once could fail (fixed for good by the store's write lock, docs/store.md "Two writers"; three
writers and a reader at once are tested beside it); plot wrote charts through a linked plots/ folder. Still open: a trajectory reward edited in the store is exported as is.

Nothing here starts a real cluster job: generated commands run with a fake ``videorl-kit`` /
``ray`` / ``python`` first on ``PATH``, and an injected command would show as a marker file.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
KIT = [sys.executable, "-m", "videorl_kit"]
TINY_SPECS = [
    "tiny-count",
    "tiny-multiple-choice",
    "tiny-boolean",
    "tiny-temporal",
    "tiny-image-count",
    "tiny-image-multiple-choice",
]
ESC = "x\x1b]52;c;cHduZWQ=\x07\x1b[2J"


def _kit(*args: str, cwd: Path, timeout: float = 120, env: dict | None = None):
    return subprocess.run(
        [*KIT, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


def _out(cp: subprocess.CompletedProcess) -> str:
    return cp.stdout + cp.stderr


def _one_line_error(cp: subprocess.CompletedProcess) -> None:
    assert cp.returncode == 1, _out(cp)[-3000:]
    assert "Traceback" not in _out(cp), _out(cp)[-3000:]
    assert "error:" in _out(cp), _out(cp)[-3000:]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project folder (spec root) with task_specs/, recipes/tiny-grpo.yaml, data and a store."""
    root = tmp_path_factory.mktemp("round4")
    (root / "pyproject.toml").write_text("")
    shutil.copytree(REPO / "task_specs", root / "task_specs")
    (root / "recipes").mkdir()
    shutil.copy(REPO / "recipes" / "tiny-grpo.yaml", root / "recipes" / "tiny-grpo.yaml")
    cp = _kit("synth", "data/synth", "--n", "2", "--seed", "0", cwd=root)
    assert cp.returncode == 0, _out(cp)
    specs = [f"task_specs/tiny/{name}.yaml" for name in TINY_SPECS]
    cp = _kit("build-cache", *specs, "--store", "store", "--workers", "1", cwd=root)
    assert cp.returncode == 0, _out(cp)
    return root


def _recipe(project: Path, name: str, **changes: object) -> Path:
    """A copy of tiny-grpo.yaml with top-level or dotted changes."""
    recipe = yaml.safe_load((project / "recipes" / "tiny-grpo.yaml").read_text())
    for dotted, value in changes.items():
        node = recipe
        *parents, last = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    path = project / "recipes" / f"{name}.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True))
    return path


def _fake_bin(folder: Path, log: Path) -> Path:
    """Fake ``videorl-kit``, ``ray``, ``python`` and ``hf`` that only log their argv."""
    folder.mkdir(parents=True, exist_ok=True)
    logger = f'#!/bin/sh\nprintf "%s\\n" "$0 $*" >> {shlex.quote(str(log))}\n'
    for name in ("videorl-kit", "ray", "python", "hf"):
        (folder / name).write_text(logger)
        (folder / name).chmod(0o755)
    return folder


def _paste(command: str, tmp_path: Path) -> str:
    """Run a command the kit printed, as a user pasting it would; returns the fakes' log."""
    log = tmp_path / "fake.log"
    fakes = _fake_bin(tmp_path / "fakebin", log)
    env = dict(os.environ, PATH=f"{fakes}:{os.environ['PATH']}")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, timeout=60)
    return log.read_text() if log.exists() else ""


def _hint_commands(text: str) -> list[str]:
    """The ``videorl-kit ...`` commands a message quotes in backticks."""
    return re.findall(r"`(videorl-kit [^`]*)`", text)


def _store_copy(project: Path, folder: Path) -> Path:
    folder.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(project / "store", folder, symlinks=True)
    return folder


# ============================================================================================
# 1. Commands printed inside error messages
# ============================================================================================
#
# Round 3 showed that `--plan` and `--dry-run` quote every value (`shlex.join`). The hints
# inside *error* lines do not: a damaged store at a path holding `$(...)` prints
# "run `videorl-kit cache repair --store st $(touch M)`", and pasting it runs `touch`.


def _hostile_store(project: Path, tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "pwned"
    store = _store_copy(project, tmp_path / f"st $(touch {marker})")
    return store, marker


def _lose_state_file(store: Path) -> None:
    (store / "videorl_kit_state.json").unlink()


def _truncate_frames_file(store: Path) -> None:
    data = sorted((store / "frames.lance" / "data").glob("*.lance"))[0]
    os.truncate(data, 100)


@pytest.mark.parametrize("damage", ["lost_state_file", "truncated_frames_file"])
def test_repair_hint_in_a_store_error_runs_nothing_when_pasted(
    project: Path, tmp_path: Path, damage: str
) -> None:
    store, marker = _hostile_store(project, tmp_path)
    {"lost_state_file": _lose_state_file, "truncated_frames_file": _truncate_frames_file}[damage](
        store
    )
    cp = _kit("cache", "status", "--store", str(store), cwd=project)
    _one_line_error(cp)
    hints = _hint_commands(_out(cp))
    assert hints, _out(cp)
    for hint in hints:
        log = _paste(hint, tmp_path)
        assert "cache" in log, (hint, log)  # the fake videorl-kit was reached
    assert not marker.exists(), hints


def _answer_tampered_store(project: Path, tmp_path: Path) -> tuple[Path, Path]:
    import lance

    store, marker = _hostile_store(project, tmp_path)
    lance.dataset(str(store / "samples.lance")).update(
        {"answer": "'99'"}, where="task_id = 'tiny-count'"
    )
    return store, marker


@pytest.mark.parametrize("command", ["verify", "export", "train"])
def test_rebuild_hint_for_a_disagreeing_sample_runs_nothing_when_pasted(
    project: Path, tmp_path: Path, command: str
) -> None:
    store, marker = _answer_tampered_store(project, tmp_path)
    if command == "verify":
        cp = _kit("cache", "verify", "--store", str(store), "--sample", "1", cwd=project)
    elif command == "export":
        cp = _kit("cache", "export", "--store", str(store), "--out", str(tmp_path / "x"),
                  cwd=project)  # fmt: skip
    else:
        cp = _kit(
            "train", "recipes/tiny-grpo.yaml", "--dry-run", "--store", str(store),
            "--output", str(tmp_path / "run"), cwd=project, timeout=180,
        )  # fmt: skip
    assert cp.returncode == 1, _out(cp)
    hints = [h for h in _hint_commands(_out(cp)) if "build-cache" in h]
    assert hints, _out(cp)
    for hint in hints:
        assert "build-cache" in _paste(hint, tmp_path), hint
    assert not marker.exists(), hints


def test_repair_report_hint_runs_nothing_when_pasted(project: Path, tmp_path: Path) -> None:
    import lance

    store, marker = _hostile_store(project, tmp_path)
    fifo = tmp_path / "source.mp4"
    os.mkfifo(fifo)  # an unrecoverable source: repair removes the row and names build-cache
    lance.dataset(str(store / "frames.lance")).update({"source_uri": f"'{fifo}'"})
    data = sorted((store / "frames.lance" / "data").glob("*.lance"))[-1]
    raw = bytearray(data.read_bytes())
    raw[len(raw) // 3] ^= 0xFF
    data.write_bytes(bytes(raw))
    cp = _kit("cache", "repair", "--store", str(store), cwd=project, timeout=60)
    hints = [h for h in _hint_commands(_out(cp)) if "build-cache" in h]
    assert hints, _out(cp)
    for hint in hints:
        _paste(hint, tmp_path)
    assert not marker.exists(), hints


def test_missing_task_hint_in_train_is_quoted(project: Path, tmp_path: Path) -> None:
    """Held: a store that lacks a task names the build-cache command with the path quoted."""
    marker = tmp_path / "pwned"
    store = tmp_path / f"p $(touch {marker})" / "st"
    cp = _kit("build-cache", "task_specs/tiny/tiny-count.yaml", "--store", str(store),
              "--workers", "1", cwd=project)  # fmt: skip
    assert cp.returncode == 0, _out(cp)
    cp = _kit("train", "recipes/tiny-grpo.yaml", "--dry-run", "--store", str(store),
              "--output", str(tmp_path / "run"), cwd=project, timeout=180)  # fmt: skip
    _one_line_error(cp)
    hints = _hint_commands(_out(cp))
    assert hints, _out(cp)
    for hint in hints:
        _paste(hint, tmp_path)
    assert not marker.exists(), hints


# ============================================================================================
# 2. Output folders holding symbolic links
# ============================================================================================
#
# A run folder, a report folder or an export folder may be shared (a scratch disk, a folder
# someone else prepared). A link placed there beforehand must not make the kit write outside
# the folder, nor overwrite the file it points at.


def _victim(tmp_path: Path, name: str = "victim.txt") -> Path:
    victim = tmp_path / "outside" / name
    victim.parent.mkdir(parents=True, exist_ok=True)
    victim.write_text("untouched\n")
    return victim


def test_plan_does_not_write_through_a_linked_plan_json(project: Path, tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    (run / "plan.json").symlink_to(victim)
    cp = _kit("train", "recipes/tiny-grpo.yaml", "--plan", "--output", str(run), cwd=project)
    assert victim.read_text() == "untouched\n", _out(cp)


def test_dry_run_bundle_does_not_write_through_links(project: Path, tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    outside = tmp_path / "outside" / "dir"
    outside.mkdir()
    run = tmp_path / "run"
    run.mkdir()
    (run / "dry_run.json").write_text("{}")
    (run / "launch.sh").symlink_to(victim)
    (run / "media").symlink_to(outside)
    (run / "data").symlink_to(outside)
    cp = _kit(
        "train", "recipes/tiny-grpo.yaml", "--backend", "openrlhf", "--dry-run",
        "--output", str(run), cwd=project, timeout=180,
    )  # fmt: skip
    assert "Traceback" not in _out(cp), _out(cp)
    assert victim.read_text() == "untouched\n", _out(cp)
    assert list(outside.iterdir()) == [], _out(cp)


@pytest.fixture(scope="module")
def eval_run(project: Path) -> Path:
    cp = _kit(
        "eval", "task_specs/eval/video-mme.yaml", "--fixture", "--variant", "random_choice",
        "--out", "runs/ev", cwd=project,
    )  # fmt: skip
    assert cp.returncode == 0, _out(cp)
    return project / "runs" / "ev"


@pytest.mark.parametrize("name", ["report.md", "scores.png"])
def test_report_does_not_write_through_a_link(
    project: Path, eval_run: Path, tmp_path: Path, name: str
) -> None:
    victim = _victim(tmp_path)
    out = tmp_path / "rep"
    out.mkdir()
    (out / name).symlink_to(victim)
    cp = _kit("report", str(eval_run), "--out", str(out), cwd=project)
    assert "Traceback" not in _out(cp), _out(cp)
    assert victim.read_bytes() == b"untouched\n", _out(cp)


def test_eval_resume_does_not_append_through_a_linked_partial_file(
    project: Path, eval_run: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "outside" / "victim.jsonl"
    victim.parent.mkdir()
    victim.write_text("")
    run = tmp_path / "ev"
    run.mkdir()
    shutil.copy(eval_run / "run.json", run / "run.json")
    (run / "samples_video-mme.jsonl.partial").symlink_to(victim)
    cp = _kit(
        "eval", "task_specs/eval/video-mme.yaml", "--fixture", "--variant", "random_choice",
        "--out", str(run), cwd=project,
    )  # fmt: skip
    assert "Traceback" not in _out(cp), _out(cp)
    assert victim.read_text() == "", _out(cp)


def test_eval_replaces_a_linked_results_json(project: Path, eval_run: Path, tmp_path: Path) -> None:
    """Held: a link named results.json in a resumed run folder is replaced, not written
    through."""
    victim = _victim(tmp_path)
    run = tmp_path / "ev"
    run.mkdir()
    shutil.copy(eval_run / "run.json", run / "run.json")
    (run / "results.json").symlink_to(victim)
    cp = _kit(
        "eval", "task_specs/eval/video-mme.yaml", "--fixture", "--variant", "random_choice",
        "--out", str(run), cwd=project,
    )  # fmt: skip
    assert "Traceback" not in _out(cp), _out(cp)
    assert victim.read_text() == "untouched\n"


@pytest.mark.parametrize("link", ["plots", "plots/kl.png"])
def test_plot_writes_no_chart_through_a_link(
    project: Path, train_run: Path, tmp_path: Path, link: str
) -> None:
    """A hole found while fixing the family (fixed): `plot` wrote its PNGs into a linked
    plots/ folder, or through a linked chart file, outside the run folder."""
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.png"
    victim.write_bytes(b"untouched")
    run = tmp_path / "run"
    shutil.copytree(train_run, run)
    shutil.rmtree(run / "plots", ignore_errors=True)
    if link == "plots":
        (run / "plots").symlink_to(outside)
    else:
        (run / "plots").mkdir()
        (run / "plots" / "kl.png").symlink_to(victim)
    cp = _kit("plot", str(run), cwd=project)
    _one_line_error(cp)
    assert sorted(p.name for p in outside.iterdir()) == ["victim.png"], _out(cp)
    assert victim.read_bytes() == b"untouched"


def test_cache_export_replaces_a_linked_manifest(project: Path, tmp_path: Path) -> None:
    """Held: a link named manifest.jsonl in --out is replaced, the file it names untouched."""
    victim = _victim(tmp_path)
    out = tmp_path / "export"
    out.mkdir()
    (out / "manifest.jsonl").symlink_to(victim)
    cp = _kit("cache", "export", "--store", "store", "--out", str(out), cwd=project)
    assert "Traceback" not in _out(cp), _out(cp)
    assert victim.read_text() == "untouched\n"


def test_cache_export_writes_no_frame_through_a_linked_frames_folder(
    project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "export"
    out.mkdir()
    (out / "frames").symlink_to(outside)
    cp = _kit("cache", "export", "--store", "store", "--out", str(out), cwd=project)
    assert "Traceback" not in _out(cp), _out(cp)
    assert list(outside.iterdir()) == [], _out(cp)


# ============================================================================================
# 3. Values that must be one line, not a traceback; printed commands that do what was planned
# ============================================================================================


@pytest.mark.parametrize(
    ("field", "value"),
    [("output_dir", "../runs/a\x00b"), ("store", "../st\x00x"), ("model", "mod\x00el")],
)
def test_nul_in_a_recipe_value_is_one_line(project: Path, field: str, value: str) -> None:
    """Held: a NUL byte (no path can hold one) is one file:line: field: message line."""
    recipe = _recipe(project, f"nul-{field}", **{field: value})
    for args in (("validate",), ("train", "--plan"), ("train", "--dry-run")):
        cp = _kit(*args[:1], str(recipe), *args[1:], cwd=project)
        assert cp.returncode == 1 and "Traceback" not in _out(cp), (args, _out(cp))
        assert field in _out(cp), _out(cp)


@pytest.mark.parametrize("field", ["store", "output_dir"])
def test_overlong_path_component_is_one_line(project: Path, field: str) -> None:
    recipe = _recipe(project, f"long-{field}", **{field: "../" + "a" * 300})
    for args in (("validate",), ("train", "--plan"), ("train", "--dry-run")):
        cp = _kit(*args[:1], str(recipe), *args[1:], cwd=project, timeout=180)
        assert "Traceback" not in _out(cp), (args, _out(cp)[-2000:])


@pytest.mark.parametrize("command", ["export", "plan", "dry-run"])
def test_output_path_that_is_a_file_is_one_line(
    project: Path, tmp_path: Path, command: str
) -> None:
    target = tmp_path / "a-file"
    target.write_text("mine\n")
    if command == "export":
        cp = _kit("cache", "export", "--store", "store", "--out", str(target), cwd=project)
    else:
        cp = _kit("train", "recipes/tiny-grpo.yaml", f"--{command}", "--backend", "openrlhf",
                  "--output", str(target), cwd=project, timeout=180)  # fmt: skip
    _one_line_error(cp)
    assert target.read_text() == "mine\n"


@pytest.mark.parametrize("world_size", ["2; touch /tmp/x", "0", "two"])
def test_hostile_world_size_is_one_line(project: Path, world_size: str) -> None:
    env = dict(os.environ, WORLD_SIZE=world_size)
    for flag in ("--plan", "--dry-run"):
        cp = _kit("train", "recipes/tiny-grpo.yaml", flag, "--output", f"runs/ws{flag}",
                  cwd=project, env=env, timeout=180)  # fmt: skip
        _one_line_error(cp)
        assert "WORLD_SIZE" in _out(cp), _out(cp)


@pytest.mark.parametrize(("key", "value"), [("file", "a\nb.json"), ("split", "tr\rain")])
def test_control_character_in_a_hub_data_field_is_refused_at_validate(
    project: Path, key: str, value: str
) -> None:
    hub = {"repo": "Org/Name", "revision": "main", "split": "train", "file": "a.json"}
    hub[key] = value
    spec = project / "task_specs" / f"hub-{key}.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "include": "datasets/video-r1-260k-video.yaml",
                "id": f"hub-{key}",
                "data": {"hub": hub, "media_root": "../data"},
            }
        )
    )
    cp = _kit("validate", str(spec), cwd=project)
    assert cp.returncode == 1 and f"data.hub.{key}" in _out(cp), _out(cp)


def _plan_json(project: Path, *args: str) -> dict:
    cp = _kit("train", "recipes/tiny-grpo.yaml", "--plan", "--json", *args, cwd=project)
    assert cp.returncode == 0, _out(cp)
    return json.loads(cp.stdout[cp.stdout.index("{") :])


def test_plan_launch_command_carries_the_planned_flags(project: Path, tmp_path: Path) -> None:
    out, store = str(tmp_path / "planned"), str(project / "store")
    trl = _plan_json(project, "--output", out, "--store", store, "--max-steps", "3")
    argv = shlex.split(trl["launch"]["command"])
    assert out in argv and store in argv and "3" in argv, trl["launch"]["command"]
    orl = _plan_json(project, "--backend", "openrlhf", "--output", out + "-o", "--store", store)
    argv = shlex.split(orl["launch"]["write_bundle"])
    assert store in argv, orl["launch"]["write_bundle"]


# ============================================================================================
# 4. Hostile JSON in results files and trajectory rows
# ============================================================================================


def _hostile_results(eval_run: Path, folder: Path, text: str) -> Path:
    shutil.copytree(eval_run, folder)
    (folder / "results.json").write_text(text)
    return folder


def _results_text(eval_run: Path) -> str:
    return (eval_run / "results.json").read_text()


@pytest.mark.parametrize("case", ["deep", "huge_int", "infinity", "schema_99", "escape_id"])
def test_report_refuses_hostile_json_in_one_line(
    project: Path, eval_run: Path, tmp_path: Path, case: str
) -> None:
    """Held: very deep nesting, a 5000-digit count, Infinity, another schema version and a
    task id with terminal escapes (in the error line) are each one plain error line."""
    text = _results_text(eval_run)
    if case == "deep":
        text = text.rstrip()[:-1] + ', "extra": ' + "[" * 200_000 + "]" * 200_000 + "}"
    elif case == "huge_int":
        text = re.sub(r'"n_rows": \d+', '"n_rows": ' + "9" * 5000, text, count=1)
    elif case == "infinity":
        text = re.sub(r'"value": 0\.\d+', '"value": Infinity', text, count=1)
    elif case == "schema_99":
        text = text.replace('"schema_version": 1', '"schema_version": 99', 1)
    else:
        results = json.loads(text)
        task = results["tasks"].pop("video-mme")
        task["task_id"] = ESC
        task["n_rows"] = -1
        results["tasks"][ESC] = task
        text = json.dumps(results)
    run = _hostile_results(eval_run, tmp_path / "run", text)
    cp = subprocess.run(
        [*KIT, "report", str(run), "--out", str(tmp_path / "rep")],
        cwd=project, capture_output=True, timeout=120,
    )  # fmt: skip
    output = (cp.stdout + cp.stderr).decode("utf-8", "replace")
    assert cp.returncode == 1 and "Traceback" not in output, output[-3000:]
    assert b"\x1b" not in cp.stdout + cp.stderr, output
    assert not (tmp_path / "rep" / "report.md").exists()


def test_report_refuses_a_duplicated_key(project: Path, eval_run: Path, tmp_path: Path) -> None:
    text = _results_text(eval_run)
    text, n = re.subn(
        r'("accuracy": \{"value": )([^,]+)', r'\g<1>0.0, "value": 0.99', text, count=1
    )
    if n == 0:  # pretty-printed: repeat the key on its own line
        text, n = re.subn(r'("value": )(0\.0|0)(,?\n)', r"\g<1>0.0,\n\g<1>0.99\3", text, count=1)
    assert n == 1
    run = _hostile_results(eval_run, tmp_path / "run", text)
    cp = _kit("report", str(run), "--out", str(tmp_path / "rep"), cwd=project)
    _one_line_error(cp)
    assert "results.json" in _out(cp), _out(cp)


def _import(project: Path, store: Path, rows: Path, source: str = "attack"):
    return subprocess.run(
        [*KIT, "trajectories", "import", str(rows), "--store", str(store),
         "--spec", "task_specs/tiny/tiny-count.yaml", "--source", source],
        cwd=project, capture_output=True, timeout=120,
    )  # fmt: skip


def test_trajectories_import_of_a_very_deep_row_is_one_line(project: Path, tmp_path: Path) -> None:
    store = _store_copy(project, tmp_path / "store")
    rows = tmp_path / "deep.jsonl"
    rows.write_text(
        '{"sample_id": "synth-count-0000", "response": "x", "extra": '
        + "[" * 100_000
        + "]" * 100_000
        + "}\n"
    )
    cp = _import(project, store, rows)
    output = (cp.stdout + cp.stderr).decode("utf-8", "replace")
    assert cp.returncode == 1 and "Traceback" not in output, output[-2000:]
    assert "deep.jsonl:1" in output, output[-2000:]


def _deep_line(prefix: str) -> str:
    return "{" + prefix + '"extra": ' + "[" * 100_000 + "]" * 100_000 + "}\n"


@pytest.fixture(scope="module")
def train_run(project: Path) -> Path:
    """A finished 1-step TRL run of the tiny recipe (metrics.jsonl, completions.jsonl)."""
    cp = _kit("train", "recipes/tiny-grpo.yaml", "--max-steps", "1", "--output", "runs/tr",
              cwd=project, timeout=600)  # fmt: skip
    assert cp.returncode == 0, _out(cp)
    return project / "runs" / "tr"


@pytest.mark.parametrize("command", ["inspect", "plot", "replay"])
def test_very_deep_json_line_is_one_line(
    project: Path, train_run: Path, tmp_path: Path, command: str
) -> None:
    if command == "replay":
        predictions = tmp_path / "pred.jsonl"
        predictions.write_text(_deep_line('"id": "x", "response": "A", '))
        cp = _kit("eval", "task_specs/eval/video-mme.yaml", "--fixture", "--backend", "replay",
                  "--predictions", str(predictions), "--out", str(tmp_path / "ev"),
                  cwd=project)  # fmt: skip
    else:
        run = tmp_path / "run"
        shutil.copytree(train_run, run)
        name = "completions.jsonl" if command == "inspect" else "metrics.jsonl"
        with (run / name).open("a") as f:
            f.write(_deep_line('"step": 2, '))
        cp = _kit(command, str(run), cwd=project)
    assert "Traceback" not in _out(cp), _out(cp)[-2000:]
    if command == "replay":  # a predictions file is refused line by line
        assert cp.returncode == 1 and "line 1" in _out(cp), _out(cp)[-2000:]
    else:  # a run's own logs skip a line that is not a record (as a half-written one)
        assert cp.returncode == 0, _out(cp)[-2000:]


@pytest.mark.xfail(
    strict=True,
    reason="a trajectories row edited in the store (reward_overall 1.0 on a wrong response) "
    "is exported by `trajectories export --min-reward 1.0` as a good trajectory; `cache verify` "
    "does not notice: the stored reward is trusted, never re-scored against the spec. Not fixed "
    "in this round: re-scoring at export cannot tell an edited row from an eval run's own "
    "verdict (judge, official protocol), whose source and id a forger can also write; "
    "docs/store.md lists it as a known limit",
)
def test_forged_trajectory_reward_is_not_exported_as_good(project: Path, tmp_path: Path) -> None:
    import lance
    import pyarrow.parquet as pq

    store = _store_copy(project, tmp_path / "store")
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        json.dumps({"sample_id": "synth-count-0000", "response": "<answer>2</answer>"}) + "\n"
        + json.dumps({"sample_id": "synth-count-0001", "response": "<answer>7</answer>"}) + "\n"
    )  # fmt: skip
    cp = _import(project, store, rows)
    assert cp.returncode == 0, cp.stderr
    lance.dataset(str(store / "trajectories.lance")).update(
        {"reward_overall": "1.0", "reward_accuracy": "1.0"},
        where="response = '<answer>7</answer>'",
    )
    out = tmp_path / "good.parquet"
    cp = _kit("trajectories", "export", "--store", str(store), "--out", str(out),
              "--min-reward", "1.0", cwd=project)  # fmt: skip
    if cp.returncode == 1 and "Traceback" not in _out(cp):
        return  # refused: safe
    exported = pq.read_table(out).to_pylist()
    assert "<answer>7</answer>" not in [row["response"] for row in exported], exported


def test_trajectories_import_hostile_values_stay_inert(project: Path, tmp_path: Path) -> None:
    """Held: a 5000-digit token id is one line naming file:line; escapes in the model label
    and the source never reach the terminal (import, stats)."""
    store = _store_copy(project, tmp_path / "store")
    big = tmp_path / "big.jsonl"
    big.write_text(
        '{"sample_id": "synth-count-0000", "response": "x", "token_ids": ['
        + "9" * 5000
        + '], "tokenizer": "t"}\n'
    )
    cp = _import(project, store, big)
    assert cp.returncode == 1 and b"big.jsonl:1" in cp.stdout + cp.stderr, cp.stdout
    rows = tmp_path / "esc.jsonl"
    rows.write_text(
        json.dumps(
            {
                "sample_id": "synth-count-0000",
                "response": "<answer>2</answer>",
                "model": ESC,
                "reward": 1.0,
            }
        )
        + "\n"
    )
    cp = _import(project, store, rows, source=ESC)
    assert b"Traceback" not in cp.stdout + cp.stderr, cp.stderr
    assert b"\x1b" not in cp.stdout + cp.stderr, cp.stdout
    for extra in ((), ("--json",)):
        cp = subprocess.run(
            [*KIT, "trajectories", "stats", "--store", str(store), *extra],
            cwd=project, capture_output=True, timeout=120,
        )  # fmt: skip
        assert cp.returncode == 0, cp.stderr
        assert b"\x1b" not in cp.stdout + cp.stderr, cp.stdout


# ============================================================================================
# 5. Special files in a store; two writers; an interrupted build
# ============================================================================================


def _state_fifo(store: Path) -> None:
    state = store / "videorl_kit_state.json"
    state.unlink()
    os.mkfifo(state)


def _state_dev_zero(store: Path) -> None:
    state = store / "videorl_kit_state.json"
    state.unlink()
    state.symlink_to("/dev/zero")


def _manifest_fifo(store: Path) -> None:
    newest = sorted((store / "frames.lance" / "_versions").glob("*.manifest"))[0]
    newest.unlink()
    os.mkfifo(newest)


SPECIAL = {"state_fifo": _state_fifo, "state_dev_zero": _state_dev_zero,
           "manifest_fifo": _manifest_fifo}  # fmt: skip


@pytest.mark.parametrize("special", sorted(SPECIAL))
def test_special_file_in_a_store_is_refused_not_waited_on(
    project: Path, tmp_path: Path, special: str
) -> None:
    store = _store_copy(project, tmp_path / "store")
    SPECIAL[special](store)
    try:
        cp = _kit("cache", "status", "--store", str(store), cwd=project, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"cache status hung on {special}")
    _one_line_error(cp)
    assert "cache repair" in _out(cp), _out(cp)


def test_a_linked_table_folder_is_refused(project: Path, tmp_path: Path) -> None:
    """Held: a table folder that is a link (to a copy elsewhere) is one line."""
    store = _store_copy(project, tmp_path / "store")
    elsewhere = tmp_path / "frames-elsewhere.lance"
    (store / "frames.lance").rename(elsewhere)
    (store / "frames.lance").symlink_to(elsewhere)
    cp = _kit("cache", "status", "--store", str(store), cwd=project)
    _one_line_error(cp)


def test_two_writers_at_once_keep_every_sample(project: Path, tmp_path: Path) -> None:
    """Two build-cache processes into one new store, at the same time, both succeed and the
    store verifies with every sample of both. A hole found in this round (most runs on a busy
    machine): one build failed with 'incomplete videorl-kit store' (its pre-check opened the
    store while the other was creating its tables) or with a Lance commit conflict on the
    tables' config (UpdateConfig); fixed by the store's write lock."""
    store = tmp_path / "shared"
    halves = [TINY_SPECS[:3], TINY_SPECS[3:]]
    procs = [
        subprocess.Popen(
            [
                *KIT,
                "build-cache",
                *[f"task_specs/tiny/{n}.yaml" for n in half],
                "--store",
                str(store),
                "--workers",
                "1",
            ],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for half in halves
    ]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    cp = _kit("cache", "verify", "--store", str(store), "--sample", "0", "--json", cwd=project)
    assert cp.returncode == 0, _out(cp)
    status = json.loads(_kit("cache", "status", "--store", str(store), "--json",
                             cwd=project).stdout)  # fmt: skip
    tasks = {s.get("task_id") for s in status.get("specs", []) if isinstance(s, dict)}
    assert not tasks or tasks >= set(TINY_SPECS), status.get("specs")


def test_three_writers_and_a_reader_at_once_keep_every_row(project: Path, tmp_path: Path) -> None:
    """Three build-cache processes into one new store (two of them overlapping on one task, so
    on the same videos) while `cache status` reads it in a loop: every build succeeds, every
    status run is a result or the one-line 'not a videorl-kit store' (never a traceback, never
    'incomplete', 'damaged' or a schema mismatch), and the store then holds exactly the frames
    and samples one build of the same specs gives, each cache key once."""
    import lance

    store = tmp_path / "shared3"
    groups = [TINY_SPECS[:2], TINY_SPECS[1:4], TINY_SPECS[4:]]
    argv = [*KIT, "build-cache", "--store", str(store), "--workers", "1", "--batch-items", "1"]
    procs = [
        subprocess.Popen(
            [*argv, *[f"task_specs/tiny/{n}.yaml" for n in group]],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for group in groups
    ]
    readings = []
    while any(p.poll() is None for p in procs):
        readings.append(_kit("cache", "status", "--store", str(store), "--json", cwd=project))
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outputs
    assert readings
    for cp in readings:
        text = _out(cp)
        assert "Traceback" not in text, text
        if cp.returncode != 0:
            _one_line_error(cp)
            assert "not a videorl-kit store" in text, text
    cp = _kit("cache", "verify", "--store", str(store), "--sample", "0", "--json", cwd=project)
    assert cp.returncode == 0, _out(cp)
    keys = lance.dataset(str(store / "frames.lance")).to_table(columns=["cache_key"])
    keys = keys.column("cache_key").to_pylist()
    assert len(keys) == len(set(keys)), "a cache key was committed twice"
    one_build = project / "store"  # built from all six specs by the fixture, in one process
    expected = lance.dataset(str(one_build / "frames.lance")).to_table(columns=["cache_key"])
    assert set(keys) == set(expected.column("cache_key").to_pylist())

    def samples(root: Path) -> set[tuple[str, str, str]]:
        table = lance.dataset(str(root / "samples.lance")).to_table(
            columns=["task_id", "sample_id", "status"]
        )
        return set(zip(*(table.column(c).to_pylist() for c in table.column_names), strict=True))

    assert samples(store) == samples(one_build)


def test_a_killed_build_leaves_a_store_that_opens_or_names_its_repair(
    project: Path, tmp_path: Path
) -> None:
    """Held: build-cache killed (SIGKILL) at several moments; the store then opens (or says
    `cache repair` in one line), and building again completes and verifies."""
    specs = [f"task_specs/tiny/{name}.yaml" for name in TINY_SPECS]
    for delay in (1.5, 2.5, 3.5):
        store = tmp_path / f"killed-{delay}"
        proc = subprocess.Popen(
            [*KIT, "build-cache", *specs, "--store", str(store), "--workers", "1"],
            cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        time.sleep(delay)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        if store.exists():
            cp = _kit("cache", "status", "--store", str(store), cwd=project)
            assert "Traceback" not in _out(cp), _out(cp)
            if cp.returncode != 0:
                assert "cache repair" in _out(cp), _out(cp)
                repair = _kit("cache", "repair", "--store", str(store), cwd=project)
                assert repair.returncode == 0, _out(repair)
        cp = _kit("build-cache", *specs, "--store", str(store), "--workers", "1", cwd=project)
        assert cp.returncode == 0, _out(cp)
        cp = _kit("cache", "verify", "--store", str(store), "--sample", "0", cwd=project)
        assert cp.returncode == 0, _out(cp)
