"""``trajectories import``: every layout, re-scoring, errors naming file:line, all-or-nothing,
idempotence, and a real SIGKILL in the middle of an import's commit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from videorl_kit.cli import app
from videorl_kit.core.errors import UserError
from videorl_kit.store.tables import StoreTables
from videorl_kit.store.trajectories import read_trajectories
from videorl_kit.train.offline.importer import import_trajectories

REPO = Path(__file__).resolve().parents[2]
GOLD = {"synth-count-0000": "2", "synth-count-0001": "2", "synth-image-count-0000": "1",
        "synth-image-count-0001": "4"}  # fmt: skip


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """The demo task and a copy of its rows in the public sets' layout (no ids, the peer's
    mix-policy fields), both built into one store."""
    from videorl_kit.store import build_cache
    from videorl_kit.synth import write_demo_task

    root = tmp_path_factory.mktemp("trajectories")
    spec = write_demo_task(root, n_per_task=2)
    rows = [json.loads(line) for line in (root / "demo.jsonl").read_text().splitlines()]
    peer_rows = []
    for index, row in enumerate(rows):
        row = {k: v for k, v in row.items() if k != "id"}
        has = index != 1
        row["has_offline_trajectory"] = has
        row["offline_output"] = (
            f"<think>look</think><answer>{row['answer']}</answer>" if has else ""
        )
        peer_rows.append(row)
    (root / "peer.jsonl").write_text("".join(json.dumps(r) + "\n" for r in peer_rows))
    text = spec.read_text().replace("id: demo", "id: peer").replace("demo.jsonl", "peer.jsonl")
    (root / "peer.yaml").write_text(text)
    build_cache([spec, root / "peer.yaml"], root / "store", workers=1)
    return root


@pytest.fixture
def store(world, tmp_path) -> Path:
    """A fresh copy of the built store (each test imports into its own)."""
    import shutil

    shutil.copytree(world / "store", tmp_path / "store")
    return tmp_path / "store"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_kit_rows_are_scored_again_and_the_files_reward_kept_beside(world, store, tmp_path):
    rows = write_jsonl(
        tmp_path / "curated.jsonl",
        [
            {
                "task_id": "demo",
                "sample_id": "synth-count-0000",
                "response": "<answer>2</answer>",
                "model": "teacher-7b",
                "reward": 0.0,
            },  # the file says 0: the verifier says 1
            {
                "task_id": "demo",
                "sample_id": "synth-image-count-0001",
                "response": "<answer>5</answer>",
                "reward": 1.0,
            },  # the file says 1: wrong (gold 4)
        ],
    )
    report = import_trajectories([rows], store, source="curated")
    assert (report.n_rows, report.n_new, report.by_task) == (2, 2, {"demo": 2})
    stored = {t["sample_id"]: t for t in read_trajectories(store, source="curated")}
    right, wrong = stored["synth-count-0000"], stored["synth-image-count-0001"]
    assert right["reward_accuracy"] == 1.0 and right["reward_details"]["file_reward"] == 0.0
    assert right["reward_details"]["verifier"] == "numeric@2"  # the verifier and its version
    assert right["policy_id"] == "teacher-7b"
    assert wrong["reward_accuracy"] == 0.0 and wrong["reward_details"]["file_reward"] == 1.0


def test_importing_the_same_file_twice_adds_nothing(world, store, tmp_path):
    rows = write_jsonl(
        tmp_path / "a.jsonl",
        [
            {"task_id": "demo", "sample_id": s, "response": f"<answer>{g}</answer>"}
            for s, g in GOLD.items()
        ]
        + [{"task_id": "demo", "sample_id": "synth-count-0000", "response": "<answer>2</answer>"}],
    )
    first = import_trajectories([rows], store)
    assert (first.n_new, first.n_duplicates) == (4, 1)
    version = StoreTables.open(store).table("trajectories").version
    second = import_trajectories([rows], store, source="other-name")
    assert (second.n_new, second.n_existing) == (0, 4)
    assert len(read_trajectories(store)) == 4
    assert {t["source"] for t in read_trajectories(store)} == {"offline:a.jsonl"}
    assert StoreTables.open(store).table("trajectories").version >= version


def test_json_and_parquet_files_and_the_tasks_own_id_column(world, store, tmp_path):
    json_file = tmp_path / "t.json"
    json_file.write_text(
        json.dumps(
            [
                {"task_id": "demo", "id": "synth-count-0001", "response": "<answer>2</answer>"},
                {
                    "task_id": "demo",
                    "id": "synth-image-count-0000",
                    "response": "<answer>1</answer>",
                },
            ],
            indent=2,
        )
    )
    table = pa.table(
        {
            "sample_id": ["synth-image-count-0001"],
            "response": ["<answer>4</answer>"],
            "tokenizer": [None],
        }
    )
    pq.write_table(table, tmp_path / "t.parquet")
    report = import_trajectories(
        [json_file, tmp_path / "t.parquet"], store, specs=[world / "demo.yaml"]
    )
    assert report.n_new == 3
    assert all(t["reward_accuracy"] == 1.0 for t in read_trajectories(store))


def test_peer_rows_are_found_by_their_content_and_rows_without_one_are_passed_over(world, store):
    report = import_trajectories([world / "peer.jsonl"], store, specs=[world / "peer.yaml"])
    assert (report.n_rows, report.n_without_trajectory, report.n_new) == (4, 1, 3)
    stored = read_trajectories(store, task_ids=["peer"])
    assert {t["sample_id"] for t in stored} == {"peer-0", "peer-2", "peer-3"}  # by row index
    assert all(t["reward_overall"] == 1.0 for t in stored)


def test_eval_samples_files_keep_the_id_eval_gave_them(world, store, tmp_path):
    from videorl_kit.eval.runner import EvalConfig, run_eval

    predictions = write_jsonl(
        tmp_path / "p.jsonl",
        [{"task": "demo", "id": s, "response": f"<answer>{g}</answer>"} for s, g in GOLD.items()],
    )
    results = run_eval(
        EvalConfig(
            specs=[world / "demo.yaml"],
            out=tmp_path / "run",
            backend="replay",
            predictions=predictions,
            store=store,
            trajectories=True,
        )
    )
    assert len(read_trajectories(store)) == 4
    report = import_trajectories([tmp_path / "run" / "samples_demo.jsonl"], store)
    assert (report.n_new, report.n_existing) == (0, 4)  # eval already appended them
    assert report.by_source == {f"eval:{results.run.run_id}": 4}


def test_token_ids_must_decode_to_the_text_and_log_probs_fit_them(world, store, tmp_path):
    from videorl_kit.train.offline.tokens import load_tokenizer

    tokenizer = load_tokenizer("tiny:qwen2.5-vl")
    text = "<answer>2</answer>"
    ids = tokenizer(text, add_special_tokens=False)["input_ids"] + [
        tokenizer.convert_tokens_to_ids("<|im_end|>")
    ]
    good = {"task_id": "demo", "sample_id": "synth-count-0000", "response": text,
            "token_ids": ids, "tokenizer": "tiny:qwen2.5-vl", "logprobs": [-0.5] * len(ids)}  # fmt: skip
    write_jsonl(tmp_path / "good.jsonl", [good])
    assert import_trajectories([tmp_path / "good.jsonl"], store).n_new == 1
    [stored] = read_trajectories(store)
    assert stored["token_ids"] == ids and stored["tokenizer_id"] == "tiny:qwen2.5-vl"
    assert stored["behaviour_logprobs"] == [-0.5] * len(ids)

    bad = [
        good | {"response": "<answer>3</answer>"},  # ids of another text
        good | {"logprobs": [-0.5] * (len(ids) - 1)},  # one log-prob short
        good | {"tokenizer": None},  # ids of no named tokenizer
        {k: v for k, v in good.items() if k != "token_ids"},  # log-probs of no ids
        good | {"logprobs": [0.5] * len(ids)},  # not a log-prob
    ]
    write_jsonl(tmp_path / "bad.jsonl", bad)
    with pytest.raises(UserError) as caught:
        import_trajectories([tmp_path / "bad.jsonl"], store)
    lines = str(caught.value).splitlines()
    assert lines[0] == "5 of 5 rows cannot be imported; nothing was imported:"
    file = tmp_path / "bad.jsonl"
    assert lines[1].startswith(f"{file}:1: token_ids decode to '<answer>2</answer>")
    assert lines[2] == (
        f"{file}:2: field 'logprobs' must hold one log-prob per token id "
        f"({len(ids)}), not {len(ids) - 1}"
    )
    assert lines[3].startswith(f"{file}:3: token ids need the name of their tokenizer")
    assert lines[4].startswith(f"{file}:4: field 'logprobs' needs the token ids")
    assert lines[5].startswith(f"{file}:5: field 'logprobs' holds a log-prob above 0")


def test_bad_rows_name_file_and_line_and_nothing_is_imported(world, store, tmp_path):
    good = {"task_id": "demo", "sample_id": "synth-count-0000", "response": "<answer>2</answer>"}
    jsonl = tmp_path / "mixed.jsonl"
    jsonl.write_text(
        "\n".join(
            [
                json.dumps(good),
                json.dumps(good | {"sample_id": "nope"}),
                "{not json",
                json.dumps(good | {"task_id": "no-such-task"}),
                json.dumps({"task_id": "demo", "sample_id": "synth-count-0001"}),
                json.dumps([1, 2]),
                json.dumps({"response": "x", "sample_id": "synth-count-0001"}),
            ]
        )
        + "\n"
    )
    json_file = tmp_path / "rows.json"
    json_file.write_text('[\n  {"task_id": "demo", "sample_id": "s9",\n   "response": "x"}\n]\n')
    with pytest.raises(UserError) as caught:
        import_trajectories([jsonl, json_file], store)
    lines = str(caught.value).splitlines()
    assert lines[0] == "7 of 8 rows cannot be imported; nothing was imported:"
    assert lines[1] == (
        f"{jsonl}:2: sample 'nope' (by sample_id) of task 'demo' is not in the "
        f"store {store}; build-cache the task's spec first"
    )
    assert lines[2].startswith(f"{jsonl}:3: not JSON (")
    assert lines[3].startswith(f"{jsonl}:4: unknown task 'no-such-task': the store")
    assert lines[4].startswith(f"{jsonl}:5: the row has no 'response' field")
    assert lines[5] == f"{jsonl}:6: a row must be a JSON object, not list"
    assert lines[6].startswith(f"{jsonl}:7: the row names no task_id and no --spec was given")
    assert lines[7].startswith(f"{json_file}:2: sample 's9' (by sample_id)")
    assert read_trajectories(store) == []  # the good first row was not imported either


def test_the_command_line_imports_reports_and_fails_in_one_message(world, store, tmp_path):
    rows = write_jsonl(
        tmp_path / "c.jsonl",
        [
            {"task_id": "demo", "sample_id": s, "response": f"<answer>{g}</answer>"}
            for s, g in GOLD.items()
        ],
    )
    runner = CliRunner()
    done = runner.invoke(
        app,
        [
            "trajectories",
            "import",
            str(rows),
            "--store",
            str(store),
            "--source",
            "curated",
            "--json",
        ],
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["n_new"] == 4
    done = runner.invoke(
        app, ["trajectories", "import", str(tmp_path / "missing.jsonl"), "--store", str(store)]
    )
    assert done.exit_code == 1
    assert isinstance(done.exception, SystemExit) or "no such file" in str(done.exception)


KILLER = """
import os, signal, sys, threading, time
from pathlib import Path
import lance

data = Path(sys.argv[1]) / "trajectories.lance" / "data"
before = set(data.iterdir()) if data.exists() else set()
real = lance.LanceDataset.merge_insert

def watch():  # SIGKILL this process the moment the commit has written a data file
    while True:
        if data.exists() and set(data.iterdir()) - before:
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.0005)

def merge_insert(self, *args, **kwargs):
    threading.Thread(target=watch, daemon=True).start()
    return real(self, *args, **kwargs)

lance.LanceDataset.merge_insert = merge_insert
from videorl_kit.train.offline.importer import import_trajectories
import_trajectories([sys.argv[2]], sys.argv[1], source="big")
print("IMPORT FINISHED")
"""


def test_an_import_killed_during_its_commit_leaves_the_table_as_it_was(world, store, tmp_path):
    first = write_jsonl(
        tmp_path / "first.jsonl",
        [{"task_id": "demo", "sample_id": "synth-count-0000", "response": "<answer>2</answer>"}],
    )
    import_trajectories([first], store)
    big = write_jsonl(
        tmp_path / "big.jsonl",
        [
            {
                "task_id": "demo",
                "sample_id": s,
                "response": f"<think>{i}</think><answer>{g}</answer>",
            }
            for i in range(3000)
            for s, g in GOLD.items()
        ],
    )
    tables = StoreTables.open(store)
    version = tables.table("trajectories").version
    script = tmp_path / "killer.py"
    script.write_text(textwrap.dedent(KILLER))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, str(script), str(store), str(big)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert "IMPORT FINISHED" not in done.stdout
    data = store / "trajectories.lance" / "data"
    assert len(list(data.iterdir())) > 1  # the killed commit had written data
    reopened = StoreTables.open(store)  # integrity checks pass
    assert reopened.table("trajectories").version == version
    assert [t["source"] for t in read_trajectories(store)] == ["offline:first.jsonl"]
    report = import_trajectories([big], store, source="big")  # the import runs again, whole
    assert report.n_new == 12000
    assert len(read_trajectories(store, source="big")) == 12000
