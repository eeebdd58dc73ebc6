"""samples rows record where their spec (and Hub data) came from; `cache status` shows it."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.hub.hub_server import HubServer
from tests.store.spec_files import VIDEO_BUDGET, video_rows, write_spec
from videorl_kit.cli import app
from videorl_kit.spec import load_spec
from videorl_kit.store import build_cache
from videorl_kit.store.tables import StoreTables

runner = CliRunner()
REPO = "kit-tests/store-provenance"


def samples(store: Path) -> list[dict]:
    return StoreTables.open(store).table("samples").to_table().to_pylist()


def expected_spec_sha256(spec) -> str:
    """The documented recipe: sha256 of the resolved spec as JSON with sorted keys."""
    text = json.dumps(spec.resolved_dict(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def status_specs(store: Path) -> list[dict]:
    result = runner.invoke(app, ["cache", "status", "--store", str(store), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["specs"]


def test_samples_rows_record_the_spec_and_its_hub_files(spec_dir: Path, tmp_path: Path) -> None:
    path = write_spec(spec_dir, "prov-task", video_rows(["a.mp4", "zero.mp4"]))
    record = {
        "uri": "hf://org/tasks@main/specs/base.yaml",
        "repo": "org/tasks",
        "revision": "3f" * 20,
        "path": "specs/base.yaml",
        "sha256": "ab" * 32,
    }
    spec = load_spec(path).with_provenance([record])
    store = tmp_path / "store"
    build_cache([spec], store, workers=1)

    rows = samples(store)
    assert len(rows) == 2  # ready and media_failed rows alike
    for row in rows:
        assert row["spec_file"] == os.path.abspath(path)
        assert row["spec_version"] == 1
        assert row["spec_sha256"] == expected_spec_sha256(spec)
        assert json.loads(row["spec_hub_files"]) == [record]
        assert (row["data_repo"], row["data_revision"], row["data_file"]) == (None, None, None)

    (source,) = status_specs(store)
    assert source["task_id"] == "prov-task" and source["rows"] == 2
    assert source["hub_files"] == [record] and source["data"] is None
    assert source["spec_sha256"] == expected_spec_sha256(spec)
    wide = {"COLUMNS": "300"}  # rich folds long cells on narrow terminals
    human = runner.invoke(app, ["cache", "status", "--store", str(store)], env=wide)
    assert human.exit_code == 0 and "org/tasks@3f3f3f3f3f3f:specs/base.yaml" in human.stdout

    # same spec content from another revision: rows are rewritten with the new record
    moved = load_spec(path).with_provenance([{**record, "revision": "4e" * 20}])
    again = build_cache([moved], store, workers=1)
    assert again.samples.rows_written == 2 and again.n_decoded == 0
    assert {json.loads(r["spec_hub_files"])[0]["revision"] for r in samples(store)} == {"4e" * 20}


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    """A loopback Hub server, set as HF_ENDPOINT, with an isolated download cache."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    server = HubServer.start(tmp_path / "hub-server")
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    yield server
    server.stop()


def test_hub_spec_and_hub_data_revisions_are_recorded(
    hub: HubServer, spec_dir: Path, tmp_path: Path
) -> None:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=hub.url)
    api.create_repo(REPO, repo_type="dataset")
    base = {
        "version": 3,
        "budget": {"video": VIDEO_BUDGET},
        "prompt": {"template": "{{ question }}"},
    }
    api.upload_file(
        path_or_fileobj=json.dumps(base).encode(), path_in_repo="specs/base.yaml",
        repo_id=REPO, repo_type="dataset",
    )  # fmt: skip

    def push_rows(names: list[str]) -> tuple[str, bytes]:
        data = "".join(json.dumps(r) + "\n" for r in video_rows(names)).encode()
        info = api.upload_file(
            path_or_fileobj=data, path_in_repo="data/rows.jsonl", repo_id=REPO,
            repo_type="dataset",
        )  # fmt: skip
        return info.oid, data

    first_commit, first_rows = push_rows(["a.mp4", "b.mp4"])
    spec_path = spec_dir / "hub-task.yaml"
    spec_path.write_text(
        f"include: hf://{REPO}@main/specs/base.yaml\n"
        "id: hub-task\n"
        "problem_type: numerical\n"
        "data:\n"
        f"  hub: {{repo: {REPO}, revision: main, file: data/rows.jsonl}}\n"
        "  media_root: .\n"
        "  allow_absolute_paths: true\n",  # the media are links into a shared folder
        encoding="utf-8",
    )
    store = tmp_path / "store"
    summary = build_cache([spec_path], store, workers=1)
    assert summary.n_ok == 2 and summary.samples.n_ready == 2

    rows = samples(store)
    spec = load_spec(spec_path)
    for row in rows:
        assert row["spec_version"] == 3 and row["spec_sha256"] == expected_spec_sha256(spec)
        (hub_file,) = json.loads(row["spec_hub_files"])
        assert hub_file["repo"] == REPO and hub_file["revision"] == first_commit
        assert hub_file["path"] == "specs/base.yaml"
        assert row["data_repo"] == REPO and row["data_file"] == "data/rows.jsonl"
        assert row["data_revision"] == first_commit  # "main" resolved to the commit read
        assert row["data_sha256"] == hashlib.sha256(first_rows).hexdigest()

    # main moves on: the next build reads and records the new commit
    second_commit, second_rows = push_rows(["a.mp4", "b.mp4", "c.mp4"])
    assert second_commit != first_commit
    again = build_cache([spec_path], store, workers=1)
    assert again.n_already_cached == 2 and again.n_decoded == 1
    assert {r["data_revision"] for r in samples(store)} == {second_commit}
    (source,) = status_specs(store)
    assert source["rows"] == 3 and source["spec_version"] == 3
    assert source["data"] == {
        "repo": REPO, "revision": second_commit, "file": "data/rows.jsonl",
        "sha256": hashlib.sha256(second_rows).hexdigest(),
    }  # fmt: skip
    assert source["hub_files"][0]["revision"] == second_commit
