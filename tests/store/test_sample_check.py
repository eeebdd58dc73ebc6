"""The samples table is checked against the task spec: the gold and the media come from the spec.

Each test edits a copy of a built store (or its data) the way someone with write access to
the store would, and checks that the training dataset refuses it with one line naming the
task, the row and ``build-cache``, and that ``cache verify`` reports the same sample.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import lance
import pytest
from typer.testing import CliRunner

from tests.store.spec_files import video_rows, write_spec
from videorl_kit.cli import app
from videorl_kit.spec import load_spec
from videorl_kit.store import CachedSampleDataset, StoreMismatchError, build_cache
from videorl_kit.store.verify import verify_store

runner = CliRunner()
TASK = "gold-task"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, media_dir: Path) -> Path:
    """Spec + data over links to the shared media (a_copy.mp4 = a.mp4's content) + a store."""
    folder = tmp_path_factory.mktemp("gold")
    for name in ("a.mp4", "b.mp4", "c.mp4", "a_copy.mp4"):
        (folder / name).symlink_to(media_dir / name)
    rows = video_rows(["a.mp4", "b.mp4", "c.mp4", "a_copy.mp4"])
    rows[1]["options"] = ["A. one", "B. two"]
    write_spec(folder, TASK, rows)
    build_cache([folder / f"{TASK}.yaml"], folder / "store", workers=1)
    return folder


@pytest.fixture
def copy(world: Path, tmp_path: Path) -> Path:
    """A private copy of the world (spec, data, links, store) to tamper with."""
    target = tmp_path / "world"
    shutil.copytree(world, target, symlinks=True)
    return target


def _spec(folder: Path):
    return load_spec(folder / f"{TASK}.yaml")


def _rows(store: Path) -> dict[str, dict]:
    table = lance.dataset(str(store / "samples.lance")).to_table(filter=f"task_id = '{TASK}'")
    return {row["sample_id"]: row for row in table.to_pylist()}


def _update(store: Path, sample_id: str, values: dict[str, str]) -> None:
    dataset = lance.dataset(str(store / "samples.lance"))
    dataset.update(values, where=f"task_id = '{TASK}' AND sample_id = '{sample_id}'")


def _refusal(folder: Path) -> str:
    with pytest.raises(StoreMismatchError) as caught:
        CachedSampleDataset(folder / "store", spec=_spec(folder))
    message = str(caught.value)
    assert "\n" not in message
    assert f"build-cache {folder / f'{TASK}.yaml'} --store {folder / 'store'}" in message
    return message


def test_a_store_that_agrees_opens_and_shared_content_is_accepted(world: Path) -> None:
    dataset = CachedSampleDataset(world / "store", spec=_spec(world))
    answers = {dataset[i]["sample_id"]: dataset[i]["answer"] for i in range(len(dataset))}
    assert answers == {"row-0": "0", "row-1": "1", "row-2": "2", "row-3": "3"}
    rows = _rows(world / "store")
    # a.mp4 and a_copy.mp4 share one frames row whose source_uri is only one of them
    assert rows["row-0"]["video_keys"] == rows["row-3"]["video_keys"]
    report = verify_store(world / "store", sample=1)
    assert report.ok and report.samples == [] and report.n_samples_checked == 4
    assert report.unchecked_tasks == {}


@pytest.mark.parametrize(
    ("column", "value", "shown"),
    [
        ("answer", "'99'", "the store's answer '99' differs from the spec's data row ('2')"),
        ("options", "['A. x', 'B. y']", "the store's options"),
        ("problem_type", "'boolean'", "the store's problem_type 'boolean'"),
    ],
)
def test_an_edited_reward_field_is_refused_and_verified(
    copy: Path, column: str, value: str, shown: str
) -> None:
    _update(copy / "store", "row-2", {column: value})
    message = _refusal(copy)
    assert f"task {TASK} row 3 (id 'row-2'): {shown}" in message, message
    report = verify_store(copy / "store", sample=1)
    assert not report.ok
    assert [(p.sample_id, p.field) for p in report.samples] == [("row-2", column)]
    result = runner.invoke(app, ["cache", "verify", "--store", str(copy / "store"), "-n", "1"])
    assert result.exit_code == 1, result.output
    assert "row-2" in result.output and "build-cache" in result.output


def test_swapped_video_keys_are_refused(copy: Path) -> None:
    rows = _rows(copy / "store")
    for a, b in (("row-1", "row-2"), ("row-2", "row-1")):
        _update(copy / "store", a, {"video_keys": f"['{rows[b]['video_keys'][0]}']"})
    message = _refusal(copy)
    assert "(and 1 more)" in message and "another file's frames" in message, message
    report = verify_store(copy / "store", sample=1)
    assert sorted((p.sample_id, p.field) for p in report.samples) == [
        ("row-1", "video_keys"), ("row-2", "video_keys"),
    ]  # fmt: skip


def test_a_shared_row_is_accepted_only_for_the_same_content(copy: Path) -> None:
    """row-3 (a_copy.mp4) may use a.mp4's frames row; pointing it at b.mp4's is refused."""
    rows = _rows(copy / "store")
    _update(copy / "store", "row-3", {"video_keys": f"['{rows['row-1']['video_keys'][0]}']"})
    assert "row 4 (id 'row-3')" in _refusal(copy)


def test_a_fifo_at_the_specs_path_is_not_opened(copy: Path) -> None:
    """Comparing content opens only a regular file: a FIFO never blocks the reader."""
    (copy / "a_copy.mp4").unlink()
    os.mkfifo(copy / "a_copy.mp4")
    script = (
        "import sys; from videorl_kit.spec import load_spec; "
        "from videorl_kit.store import CachedSampleDataset\n"
        "try:\n"
        f"    CachedSampleDataset({str(copy / 'store')!r}, spec=load_spec({str(copy)!r} + "
        f"'/{TASK}.yaml'))\n"
        "except Exception as exc:\n"
        "    print('REFUSED', exc)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env=env)  # fmt: skip
    assert "REFUSED" in done.stdout and "row 4 (id 'row-3')" in done.stdout, done


def test_data_changed_after_the_build_is_refused_until_built_again(copy: Path) -> None:
    data = copy / f"{TASK}.jsonl"
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    rows[0]["answer"] = "7"
    del rows[2]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    message = _refusal(copy)
    assert "row 1 (id 'row-0'): the store's answer '0'" in message and "(and 1 more)" in message
    problems = verify_store(copy / "store", sample=1, specs=[_spec(copy)]).samples
    assert {p.sample_id: p.field for p in problems} == {"row-0": "answer", "row-2": "row"}
    assert "no usable row" in str(next(p for p in problems if p.field == "row"))
    build_cache([copy / f"{TASK}.yaml"], copy / "store", workers=1)  # the repair named
    dataset = CachedSampleDataset(copy / "store", spec=_spec(copy))
    assert {dataset[i]["sample_id"]: dataset[i]["answer"] for i in range(len(dataset))} == {
        "row-0": "7", "row-1": "1", "row-3": "3",
    }  # fmt: skip


def test_verify_uses_the_given_spec_and_names_tasks_it_could_not_check(copy: Path) -> None:
    _update(copy / "store", "row-0", {"answer": "'5'"})
    spec_file = copy / f"{TASK}.yaml"
    gone = str(copy / "elsewhere" / spec_file.name)  # a store built on another machine
    lance.dataset(str(copy / "store" / "samples.lance")).update({"spec_file": f"'{gone}'"})
    report = verify_store(copy / "store", sample=1)
    assert report.samples == []  # nothing checked is nothing found: the task is named
    assert TASK in report.unchecked_tasks and gone in report.unchecked_tasks[TASK]
    assert "--spec" in report.unchecked_tasks[TASK]
    result = runner.invoke(
        app, ["cache", "verify", "--store", str(copy / "store"), "-n", "1", "--spec",
              str(spec_file), "--json"],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    payload = json.loads(result.output)
    assert [s["sample_id"] for s in payload["samples"]] == ["row-0"]
    assert payload["n_samples_checked"] == 4 and payload["unchecked_tasks"] == {}


def test_a_spec_written_in_code_checks_the_same(world: Path, tmp_path: Path) -> None:
    """Datasets over specs built in code (no spec file) are checked the same way."""
    from videorl_kit.spec.models import TaskSpec

    data = _spec(world).resolved_dict()
    data["data"].update(path=str(world / f"{TASK}.jsonl"), media_root=str(world))
    spec = TaskSpec.model_validate(data)
    assert spec.source_file is None
    store = tmp_path / "store"
    shutil.copytree(world / "store", store)
    CachedSampleDataset(store, spec=spec)
    _update(store, "row-1", {"answer": "'0'"})
    with pytest.raises(StoreMismatchError, match=r"build-cache SPEC\.\.\. --store"):
        CachedSampleDataset(store, spec=spec)


def test_trajectories_are_scored_with_the_specs_gold(copy: Path, tmp_path: Path) -> None:
    """``trajectories import`` re-scores each response: never against an edited store gold."""
    from videorl_kit.train.offline.importer import import_trajectories

    lines = tmp_path / "offline.jsonl"
    lines.write_text(json.dumps({"task_id": TASK, "sample_id": "row-2", "model": "m",
                                 "response": "<answer>2</answer>"}) + "\n")  # fmt: skip
    _update(copy / "store", "row-1", {"answer": "'2'"})
    with pytest.raises(StoreMismatchError, match=r"row 2 \(id 'row-1'\): the store's answer"):
        import_trajectories([lines], copy / "store", specs=[copy / f"{TASK}.yaml"])
    _update(copy / "store", "row-1", {"answer": "'1'"})  # put back: the import scores as before
    report = import_trajectories([lines], copy / "store", specs=[copy / f"{TASK}.yaml"])
    assert report.n_new == 1


def test_cache_export_writes_no_edited_gold(copy: Path, tmp_path: Path) -> None:
    """samples.jsonl hands the gold to trainers outside the kit: an edited one refuses it."""
    from videorl_kit.store.verify import export_store

    report = export_store(copy / "store", tmp_path / "ok", specs=[_spec(copy)])
    assert report.n_samples == 4 and report.unchecked_tasks == {}
    _update(copy / "store", "row-0", {"answer": "'9'"})
    with pytest.raises(StoreMismatchError, match=r"row 1 \(id 'row-0'\)"):
        export_store(copy / "store", tmp_path / "bad", specs=[_spec(copy)])
    assert not (tmp_path / "bad").exists()  # refused before anything is written


def test_a_passed_check_is_remembered_only_while_nothing_changed(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second open of the same dataset skips re-reading the spec's rows; any edit of the
    store's rows or of the data file after a passed check is still refused."""
    from videorl_kit.store import sample_check

    calls = []
    real = sample_check.iter_samples

    def counting(*args, **kwargs):  # the real reader, counted
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(sample_check, "iter_samples", counting)
    CachedSampleDataset(copy / "store", spec=_spec(copy))
    CachedSampleDataset(copy / "store", spec=_spec(copy))
    assert len(calls) == 1
    _update(copy / "store", "row-2", {"answer": "'8'"})  # after a remembered pass
    assert "the store's answer '8'" in _refusal(copy)
    _update(copy / "store", "row-2", {"answer": "'2'"})
    CachedSampleDataset(copy / "store", spec=_spec(copy))
    data = copy / f"{TASK}.jsonl"
    data.write_text(data.read_text().replace('"answer": "2"', '"answer": "6"'))
    assert "the store's answer '2' differs from the spec's data row ('6')" in _refusal(copy)
