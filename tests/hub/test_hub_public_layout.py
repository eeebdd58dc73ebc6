"""Publishing a spec over the public sets' layout (a ``media:`` column, the gold wrapped in
``<answer>…</answer>``): the sample manifest on the Hub holds media paths relative to the
media root and the gold the verifier sees."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow.parquet as pq

from tests.hub.hub_server import HubServer
from tests.public_layout import MIXED_ROWS, MIXED_SPEC
from videorl_kit.hub import publish

REPO = "my-org/public-layout"


def write_public_task(root: Path) -> Path:
    """``mixed.yaml`` reading ``mydata/mixed.jsonl``, its media under ``mydata/../data``."""
    (root / "mydata").mkdir(parents=True)
    (root / "data").mkdir()
    lines = "".join(json.dumps(row) + "\n" for row in MIXED_ROWS)
    (root / "mydata" / "mixed.jsonl").write_text(lines, encoding="utf-8")
    spec = MIXED_SPEC.replace("path: mixed.jsonl", "path: mydata/mixed.jsonl")
    spec = spec.replace("media_root: .", "media_root: mydata/../data")
    (root / "mixed.yaml").write_text(spec, encoding="utf-8")
    return root / "mixed.yaml"


def test_published_samples_hold_relative_media_and_the_unwrapped_gold(
    hub: HubServer, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the spec named relatively, as a user types it
    write_public_task(tmp_path)
    result = publish(["mixed.yaml"], REPO, endpoint=hub.url)
    assert result.created_commit
    table = pq.read_table(io.BytesIO(hub.read(REPO, "data/mixed/sample.parquet")))
    rows = {row["sample_id"]: row for row in table.to_pylist()}
    assert [(rows[i]["videos"], rows[i]["images"]) for i in ("101", "102", "103", "105")] == [
        (["videos/clip_a.mp4"], []),
        (["videos/clip_b.mp4"], []),
        ([], ["images/sign.png"]),
        ([], ["images/ruler.png"]),
    ]
    assert {i: json.loads(row["answer"]) for i, row in rows.items()} == {
        "101": "B",
        "102": "3",
        "103": "STOP",
        "104": "a green bar moves from left to right",
        "105": "40",
    }


def test_structured_and_plain_golds_keep_their_form(tmp_path: Path) -> None:
    """A wrapped JSON gold is stored as its object; a plain number stays a number."""
    rows = [
        {**MIXED_ROWS[1], "problem_id": 1, "solution": 3},
        {**MIXED_ROWS[1], "problem_id": 2, "problem_type": "temporal grounding",
         "solution": '<answer>{"time": [1.5, 4.0]}</answer>'},
    ]  # fmt: skip
    spec = write_public_task(tmp_path)
    (tmp_path / "mydata" / "mixed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    publish([spec], REPO, dry_run_dir=tmp_path / "out")
    table = pq.read_table(tmp_path / "out" / "data" / "mixed" / "sample.parquet")
    assert [json.loads(a) for a in table.column("answer").to_pylist()] == [
        3,
        {"time": [1.5, 4.0]},
    ]
    assert table.column("videos").to_pylist() == [["videos/clip_b.mp4"]] * 2
