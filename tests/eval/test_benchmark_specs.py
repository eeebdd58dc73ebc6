"""The 22 benchmark specs: each validates, declares its source honestly, ships a three-row
fixture whose media exist, renders the golden prompt, and scores its own gold at 100%."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import av
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.eval.conftest import write_predictions
from tests.eval.fixture_media import EVAL_SPECS, fixture_samples
from videorl_kit.eval.runner import EvalConfig, run_eval
from videorl_kit.eval.tasks import load_tasks, use_fixture
from videorl_kit.spec import load_spec
from videorl_kit.spec.data import read_rows
from videorl_kit.spec.models import TaskSpec
from videorl_kit.spec.prompt import render_prompt
from videorl_kit.spec.protocols import apply_protocol

SNAPSHOTS = Path(__file__).parent / "snapshots"
SPECS = Path(__file__).resolve().parents[2] / "task_specs" / "eval"
FULL_COMMIT = re.compile(r"[0-9a-f]{40}")
BENCHMARKS = {
    "Video-MME", "MVBench", "TempCompass", "LVBench", "LongVideoBench", "MLVU", "Video-Holmes",
    "MINERVA", "VCR-Bench", "VideoReasonBench", "LongVideo-Reason", "MMVU (MC)", "Video-MMMU",
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
    assert_source_marked_honestly(spec)
    assert spec.budget.video.max_frames >= spec.budget.video.min_frames


def assert_source_marked_honestly(spec: TaskSpec) -> None:
    """A verified source names what was checked: a Hub file its full commit and the
    huggingface.co page(s) it was seen on, any other file its sha256; a Hub origin is the
    very file the spec reads."""
    source, hub = spec.eval.source, spec.data.hub
    if hub is not None:
        assert source.origin == hub.uri, "the origin must name the file the spec reads"
        if source.verified:
            assert FULL_COMMIT.fullmatch(hub.revision), "only a full commit can be verified"
            note = source.note or ""
            assert hub.revision in note, "the note must say where the pinned commit was seen"
            assert re.search(
                rf"https://huggingface\.co/(api/)?datasets/{re.escape(hub.repo)}/", note
            )
    elif source.verified:
        assert source.sha256 is not None


def _claiming(spec: TaskSpec, origin: str | None = None, note: str | None = None, **hub):
    """``spec`` with its Hub file and source changed (origin follows the file unless given)."""
    data = spec.data.model_copy(update={"hub": spec.data.hub.model_copy(update=hub)})
    source = spec.eval.source.model_copy(
        update={"origin": origin or data.hub.uri, "note": note or spec.eval.source.note}
    )
    section = spec.eval.model_copy(update={"source": source})
    return spec.model_copy(update={"data": data, "eval": section})


@pytest.mark.parametrize(
    "claim",
    [
        {"revision": "main"},  # a branch cannot be verified
        {"revision": "799008a"},  # nor a short commit
        {"revision": "0" * 40},  # a commit the note does not name
        {"repo": "someone/charades_sta"},  # a repo the pages do not show
        {"origin": "hf://lmms-lab/charades_sta@main/data/test-00000-of-00001.parquet"},
        {"note": "checked at 799008a8e37860e3bbd8418c6e3111b0bc05f648"},  # no page named
    ],
    ids=["branch", "short-commit", "other-commit", "other-repo", "other-origin", "no-url"],
)
def test_the_honesty_check_refuses_a_false_claim(claim):
    spec = load_spec(SPECS / "charades-sta.yaml")
    assert_source_marked_honestly(spec)
    with pytest.raises(AssertionError):
        assert_source_marked_honestly(_claiming(spec, **claim))


# The column layouts of the verified Hub files as their dataset cards declare them (the URLs
# are in each spec's eval.source.note): name, Arrow type, in file order. A fixture keeps them.
HUB_COLUMNS = {
    "video-mme": [
        ("video_id", "string"), ("duration", "string"), ("domain", "string"),
        ("sub_category", "string"), ("url", "string"), ("videoID", "string"),
        ("question_id", "string"), ("task_type", "string"), ("question", "string"),
        ("options", "list<string>"), ("answer", "string"),
    ],
    "tempcompass": [
        ("video_id", "string"), ("question", "string"), ("answer", "string"), ("dim", "string"),
    ],
    "charades-sta": [("video", "string"), ("caption", "string"), ("timestamp", "list<halffloat>")],
}  # fmt: skip


def _arrow_layout(schema: pa.Schema) -> list[tuple[str, str]]:
    def name(kind: pa.DataType) -> str:
        return f"list<{kind.value_type}>" if pa.types.is_list(kind) else str(kind)

    return [(f.name, name(f.type)) for f in schema]


def test_every_verified_hub_source_has_its_card_columns_recorded():
    specs = [load_spec(p) for p in EVAL_SPECS]
    verified = {s.id for s in specs if s.data.hub is not None and s.eval.source.verified}
    assert verified == set(HUB_COLUMNS)


@pytest.mark.parametrize("spec_id", sorted(HUB_COLUMNS))
def test_verified_hub_fixture_has_the_columns_the_hub_card_declares(spec_id):
    spec = load_spec(SPECS / f"{spec_id}.yaml")
    fixture = spec.resolve(spec.eval.fixture.path)
    assert Path(spec.data.hub.file).name == fixture.name
    assert _arrow_layout(pq.read_schema(fixture)) == HUB_COLUMNS[spec_id]


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


@pytest.mark.parametrize("protocol", ["reasoning", "official"])
@pytest.mark.parametrize("path", EVAL_SPECS, ids=IDS)
def test_prompt_snapshot(path, protocol):
    """The exact prompt of each fixture row under each protocol (regenerate with
    UPDATE_SNAPSHOTS=1 and review; an official prompt is checked against the cited source)."""
    spec = use_fixture(apply_protocol(load_spec(path), protocol))
    prompts = [render_prompt(spec, s) for s in fixture_samples(path)]
    text = "\n\n=====\n\n".join(prompts)
    suffix = "" if protocol == "reasoning" else f".{protocol}"
    snapshot = SNAPSHOTS / f"{spec.id}{suffix}.txt"
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
