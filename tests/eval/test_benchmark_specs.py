"""The 22 benchmark specs: each validates, declares its source honestly, ships a three-row
fixture whose media exist, renders the golden prompt, and scores its own gold at 100%."""

from __future__ import annotations

import json
import os
from pathlib import Path

import av
import pytest

from tests.eval.conftest import write_predictions
from tests.eval.fixture_media import EVAL_SPECS, fixture_samples
from videorl_kit.eval.runner import EvalConfig, run_eval
from videorl_kit.eval.tasks import load_tasks, use_fixture
from videorl_kit.spec import load_spec
from videorl_kit.spec.data import read_rows
from videorl_kit.spec.prompt import render_prompt

SNAPSHOTS = Path(__file__).parent / "snapshots"
BENCHMARKS = {
    "Video-MME", "MVBench", "TempCompass", "LVBench", "LongVideoBench", "MLVU", "Video-Holmes",
    "MINERVA", "VCR-Bench", "VideoReasonBench", "LongVideo-Reason", "MMVU", "Video-MMMU",
    "VideoMathQA", "VSI-Bench", "Charades-STA", "STVG", "OVO-Bench", "ODV-Bench",
    "LiveSports-3K", "MotionBench", "TVGBench",
}  # fmt: skip
IDS = [p.stem for p in EVAL_SPECS]


def test_all_22_benchmarks_have_a_spec():
    names = {load_spec(p).eval.benchmark for p in EVAL_SPECS}
    assert names == BENCHMARKS


@pytest.mark.parametrize("path", EVAL_SPECS, ids=IDS)
def test_spec_declares_source_budget_and_fixture(path):
    spec = load_spec(path)
    section = spec.eval
    assert section.group and section.source is not None and section.fixture is not None
    if spec.data.hub is not None:  # a Hub source: a real repo id, a revision, and honesty
        assert "/" in spec.data.hub.repo and spec.data.hub.revision
        assert section.source.origin.startswith(f"hf://{spec.data.hub.repo}@")
        if len(spec.data.hub.revision) != 40:
            assert section.source.verified is False, "an unpinned revision cannot be verified"
    if section.source.verified:
        assert section.source.sha256 is not None
    assert spec.budget.video.max_frames >= spec.budget.video.min_frames


@pytest.mark.parametrize("path", EVAL_SPECS, ids=IDS)
def test_fixture_has_three_rows_in_the_source_layout_and_real_media(path):
    spec = load_spec(path)
    fixture = spec.resolve(spec.eval.fixture.path)
    rows = [row for _, row in read_rows(fixture)]
    assert len(rows) == 3 and all(isinstance(r, dict) for r in rows)
    if spec.data.path is not None and spec.data.path.endswith((".json", ".jsonl", ".parquet")):
        assert Path(spec.data.path).suffix == fixture.suffix  # same file format as the source
    samples = fixture_samples(path)
    assert [s.skip_reason for s in samples] == [None, None, None]
    for sample in samples:
        assert sample.videos, f"{sample.sample_id} has no video"
        for media in [*sample.videos, *sample.images]:
            assert media.is_file(), media
        with av.open(str(sample.videos[0])) as container:
            assert container.streams.video[0].frames > 0


def test_peer_fixtures_keep_the_peer_columns():
    for path in EVAL_SPECS:
        spec = load_spec(path)
        if spec.data.fields.answer != "solution":
            continue
        rows = [row for _, row in read_rows(spec.resolve(spec.eval.fixture.path))]
        for row in rows:
            assert {"problem", "options", "solution", "path", "problem_type"} <= set(row), path
            assert row["solution"].startswith("<answer>")


@pytest.mark.parametrize("path", EVAL_SPECS, ids=IDS)
def test_prompt_snapshot(path):
    """The exact prompt of each fixture row (regenerate with UPDATE_SNAPSHOTS=1 and review)."""
    spec = use_fixture(load_spec(path))
    prompts = [render_prompt(spec, s) for s in fixture_samples(path)]
    text = "\n\n=====\n\n".join(prompts)
    snapshot = SNAPSHOTS / f"{spec.id}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1" or not snapshot.exists():
        if os.environ.get("CI") and not snapshot.exists():
            pytest.fail(f"missing snapshot {snapshot}; run UPDATE_SNAPSHOTS=1 and commit it")
        SNAPSHOTS.mkdir(exist_ok=True)
        snapshot.write_text(text)
    assert text == snapshot.read_text()


@pytest.mark.parametrize("path", EVAL_SPECS, ids=IDS)
def test_verifier_scores_its_own_gold_at_100_percent(path, tmp_path):
    tasks = load_tasks([path], fixture=True)
    predictions = write_predictions(tmp_path / "gold.jsonl", tasks)
    results = run_eval(
        EvalConfig(specs=[path], out=tmp_path / "run", backend="replay",
                   predictions=predictions, fixture=True)
    )  # fmt: skip
    task = results.tasks[tasks[0].id]
    assert (task.n_rows, task.n_scored, task.n_skipped, task.n_unverifiable) == (3, 3, 0, 0)
    assert task.metrics[task.primary_metric].value == pytest.approx(1.0)
    records = [json.loads(line) for line in (tmp_path / "run" / task.samples_file).open()]
    assert [r["accuracy"] for r in records] == [1.0, 1.0, 1.0]
