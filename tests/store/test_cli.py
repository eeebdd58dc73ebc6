"""build-cache and cache status | verify | export through the real Typer app."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from tests.store.spec_files import video_rows, write_spec
from videorl_kit.cli import app
from videorl_kit.core.errors import UserError
from videorl_kit.store import FrameStore
from videorl_kit.store.frame_codec import block_checksums, block_sizes
from videorl_kit.store.row_digest import row_digest
from videorl_kit.store.schema import FRAMES_SCHEMA

runner = CliRunner()
CONTRACT_KEYS = ["n_input", "n_ok", "n_failed", "n_skipped", "n_already_cached", "seconds"]


def test_build_cache_json_summary(spec_dir: Path, tmp_path: Path) -> None:
    spec = write_spec(spec_dir, "cli-task", video_rows(["a.mp4", "zero.mp4"]))
    store = tmp_path / "store"
    result = runner.invoke(
        app, ["build-cache", str(spec), "--store", str(store), "--workers", "1", "--json"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert list(summary)[:6] == CONTRACT_KEYS
    assert (summary["n_input"], summary["n_ok"], summary["n_failed"]) == (2, 1, 1)
    assert summary["n_input"] == summary["n_ok"] + summary["n_failed"] + summary["n_skipped"]
    assert summary["invariant_holds"] is True
    assert summary["item_timeout_s"] == 300.0  # the default per-item decode limit

    command = ["build-cache", str(spec), "--store", str(store), "--json", "--item-timeout", "0"]
    again = json.loads(runner.invoke(app, command).stdout)
    assert again["n_already_cached"] == 1 and again["n_failed"] == 1
    assert again["item_timeout_s"] is None  # 0: no limit


def test_build_cache_human_output_prints_the_invariant(spec_dir: Path, tmp_path: Path) -> None:
    spec = write_spec(spec_dir, "cli-human", video_rows(["a.mp4", "text.mp4"]))
    result = runner.invoke(app, ["build-cache", str(spec), "--store", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "n_input 2 == n_ok 1 + n_failed 1 + n_skipped 0 (holds)" in result.output
    assert "--retry-failed" in result.output


def test_user_errors_are_one_line(tmp_path: Path) -> None:
    command = "from videorl_kit.cli import main; main()"
    missing = subprocess.run(
        [sys.executable, "-c", command, "cache", "status", "--store", str(tmp_path / "nope")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert missing.returncode == 1
    assert missing.stderr.strip().startswith("error: ")
    assert len(missing.stderr.strip().splitlines()) == 1
    assert "not a videorl-kit store" in missing.stderr
    with pytest.raises(UserError, match="--engine"):
        runner.invoke(
            app, ["build-cache", "x.yaml", "--store", str(tmp_path), "--engine", "spark"],
            catch_exceptions=False,
        )  # fmt: skip


def test_help_has_examples() -> None:
    for command in (["build-cache"], ["cache", "status"], ["cache", "verify"], ["cache", "export"]):
        result = runner.invoke(app, [*command, "--help"])
        assert result.exit_code == 0 and "Examples" in result.output, command


def test_cache_status(built_store: Path) -> None:
    result = runner.invoke(app, ["cache", "status", "--store", str(built_store), "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["frames"]["rows"] == 4 and info["samples"]["rows"] == 4
    assert info["samples"]["by_task"] == {"built-task": {"ready": 4}}
    assert sum(b["rows"] for b in info["budgets"].values()) == 4
    human = runner.invoke(app, ["cache", "status", "--store", str(built_store)])
    assert human.exit_code == 0 and "budgets" in human.output


def test_cache_verify_ok(built_store: Path) -> None:
    result = runner.invoke(
        app, ["cache", "verify", "--store", str(built_store), "--sample", "0", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["n_checked"] == 4 and report["counts"] == {"ok": 4}
    assert all(r["detail"] == "bit-exact" for r in report["rows"])


def _replace_frames(store: Path, key: str, frames: bytes, sha: str) -> None:
    dataset = lance.dataset(str(store / "frames.lance"))
    row = dataset.to_table(filter=f"cache_key = '{key}'").to_pylist()[0]
    row.update(
        frames=frames, frames_codec="none", frames_chunk_sizes=[], frames_sha256=sha,
        frames_block_xxh3=block_checksums(frames, block_sizes(row["frames_shape"], "none", [])),
    )  # fmt: skip
    row["row_digest"] = row_digest(row)  # a consistent forgery: only re-decoding sees it
    table = pa.Table.from_pylist([row], schema=FRAMES_SCHEMA)
    dataset.merge_insert("cache_key").when_matched_update_all().execute(table)


def test_cache_verify_detects_tampering(built_store: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(built_store, store)
    keys = FrameStore.open(store).keys()
    original = FrameStore.open(store).get(keys[0]).frames
    altered = original.copy()
    altered[0, 0, 0, 0] ^= 0x40
    data = altered.tobytes()
    _replace_frames(store, keys[0], data, hashlib.sha256(data).hexdigest())  # consistent hash
    second = FrameStore.open(store).get(keys[1]).frames
    _replace_frames(store, keys[1], second.tobytes(), "0" * 64)  # stale hash: corrupt
    result = runner.invoke(app, ["cache", "verify", "--store", str(store), "-n", "0", "--json"])
    assert result.exit_code == 1
    rows = {r["cache_key"]: r for r in json.loads(result.stdout)["rows"]}
    assert rows[keys[0]]["status"] == "mismatch" and rows[keys[0]]["max_abs_diff"] == 0x40
    assert rows[keys[1]]["status"] == "corrupt"
    tolerant = runner.invoke(
        app, ["cache", "verify", "--store", str(store), "-n", "0", "--tolerance", "64", "--json"]
    )
    assert json.loads(tolerant.stdout)["counts"] == {"ok": 3, "corrupt": 1}


def test_cache_export_writes_frames_and_manifests(built_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    result = runner.invoke(
        app, ["cache", "export", "--store", str(built_store), "--out", str(out), "--format", "png",
              "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    lines = [json.loads(x) for x in (out / "manifest.jsonl").read_text().splitlines()]
    assert report["n_items"] == len(lines) == 4
    store = FrameStore.open(built_store)
    from PIL import Image

    for line in lines:
        cached = store.get(line["cache_key"])
        assert len(line["frame_files"]) == cached.n_frames
        assert line["timestamps_s"] == cached.timestamps_s
        assert line["video_metadata"]["frames_indices"] == cached.frame_indices
        first = np.asarray(Image.open(out / line["frame_files"][0]))
        np.testing.assert_array_equal(first, cached.frames[0])  # PNG is lossless
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == report["n_samples"] == 4
    video_sample = next(s for s in samples if s["videos"])
    assert all((out / p).is_file() for p in video_sample["videos"][0])
    jpg = runner.invoke(
        app, ["cache", "export", "--store", str(built_store), "--out", str(tmp_path / "j")]
    )
    assert jpg.exit_code == 0 and next((tmp_path / "j" / "frames").rglob("*.jpg"))


def test_cache_verify_checks_a_reproducible_random_subset(
    built_store: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    shutil.copytree(built_store, store)
    keys = FrameStore.open(store).keys()
    assert len(keys) == 4

    def verify(seed: int) -> tuple[int, dict]:
        command = ["cache", "verify", "--store", str(store), "--sample", "2", "--seed", str(seed)]
        result = runner.invoke(app, [*command, "--json"])
        return result.exit_code, json.loads(result.stdout)

    code, report = verify(0)
    assert code == 0 and report["n_checked"] == 2 and report["counts"] == {"ok": 2}
    assert all(r["detail"] == "bit-exact" for r in report["rows"])  # re-decoded and compared
    chosen = {
        seed: frozenset(r["cache_key"] for r in verify(seed)[1]["rows"]) for seed in range(16)
    }
    assert all(len(c) == 2 and c <= set(keys) for c in chosen.values())
    for seed in (0, 5, 11):  # same seed, same rows
        assert frozenset(r["cache_key"] for r in verify(seed)[1]["rows"]) == chosen[seed]
    assert len(set(chosen.values())) > 1  # other seeds, other rows

    damaged = sorted(chosen[0])[0]
    frames = FrameStore.open(store).get(damaged).frames
    _replace_frames(store, damaged, frames.tobytes(), "0" * 64)  # stale hash: corrupt
    outside = next(seed for seed, c in chosen.items() if damaged not in c)
    inside = 0
    code, report = verify(outside)
    assert code == 0 and report["counts"] == {"ok": 2}  # the damage is not in the sample
    assert {r["cache_key"] for r in report["rows"]} == chosen[outside]
    code, report = verify(inside)
    assert code == 1 and report["counts"] == {"ok": 1, "corrupt": 1}
    assert {r["cache_key"]: r["status"] for r in report["rows"]}[damaged] == "corrupt"
    assert {r["cache_key"] for r in report["rows"]} == chosen[inside]


def test_build_cache_names_the_failed_files(
    spec_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The summary says which files failed and why: in --json and in the printed summary."""
    monkeypatch.chdir(spec_dir)
    spec = write_spec(spec_dir, "cli-failed", video_rows(["a.mp4", "zero.mp4", "text.mp4"]))
    store = tmp_path / "store"
    result = runner.invoke(app, ["build-cache", spec.name, "--store", str(store), "--json"])
    assert result.exit_code == 0, result.output
    failed = json.loads(result.stdout)["failed_files"]
    assert sorted(failed) == [str(spec_dir / "text.mp4"), str(spec_dir / "zero.mp4")]
    assert all(reason.split(": ", 1)[0].endswith("Error") for reason in failed.values())

    human = runner.invoke(
        app, ["build-cache", spec.name, "--store", str(store)], terminal_width=300
    )
    lines = human.stdout.splitlines()
    start = lines.index("failed files (2):")
    for line, name in zip(lines[start + 1 : start + 3], ["text.mp4", "zero.mp4"], strict=True):
        reason = failed[str(spec_dir / name)]
        shown = reason if len(reason) <= 200 else reason[:199] + "…"  # long reasons are cut
        assert line == f"  {name}: {shown}"
