"""The dry-run repo folder: layout, resolved specs, manifest, card and sample manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from videorl_kit.hf.manifest import MANIFEST_NAME, hash_tree
from videorl_kit.hub import HubError, Manifest, publish, resolved_spec_data
from videorl_kit.hub.card import parse_front_matter
from videorl_kit.spec import load_spec


@pytest.fixture
def folder(tmp_path: Path, spec_paths: list[Path]) -> Path:
    out = tmp_path / "dry"
    result = publish(spec_paths, "my-org/video-tasks", dry_run_dir=out, license="apache-2.0")
    assert result.dry_run and result.revision is None and result.folder == out
    return out


def test_dry_run_writes_card_specs_samples_and_manifest(folder: Path) -> None:
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert files == [
        "README.md",
        "data/synth-color/sample.parquet",
        "data/synth-count/sample.parquet",
        "specs/synth-color.yaml",
        "specs/synth-count.yaml",
        MANIFEST_NAME,
    ]


def test_published_spec_is_the_resolved_spec_as_plain_data(
    folder: Path, spec_paths: list[Path]
) -> None:
    for path in spec_paths:
        local = load_spec(path)
        text = (folder / "specs" / f"{local.id}.yaml").read_text()
        published = yaml.safe_load(text)
        assert published == resolved_spec_data(local)
        assert "include" not in published  # includes are merged, not referenced
        assert published["budget"]["video"]["max_frames"] == 16  # from the base file
        assert set(published["verifier"]) == {"name", "version", "params"}
        # the published file is itself a loadable spec
        assert load_spec(folder / "specs" / f"{local.id}.yaml").model_dump() == local.model_dump()
    color = yaml.safe_load((folder / "specs" / "synth-color.yaml").read_text())
    assert color["problem_type"] == "multiple_choice"
    assert color["verifier"] == {"name": "choice", "version": 2, "params": {}}


def test_manifest_lists_sha256_of_every_other_file(folder: Path) -> None:
    manifest = Manifest.model_validate_json((folder / MANIFEST_NAME).read_text())
    assert manifest.files == hash_tree(folder)
    assert MANIFEST_NAME not in manifest.files
    assert [s.id for s in manifest.specs] == ["synth-count", "synth-color"]
    count = manifest.specs[0]
    assert count.verifier == {"name": "numeric", "version": 2}
    assert count.data_source == {"path": "data/count.jsonl"}
    assert count.sample_rows == 20


def test_card_front_matter_parses_with_huggingface_hub(folder: Path) -> None:
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(folder / "README.md")
    data = card.data.to_dict()
    assert data["license"] == "apache-2.0"
    assert {"videorl-kit", "task-spec", "numerical", "multiple-choice", "counting"} <= set(
        data["tags"]
    )
    assert data["configs"] == [
        {
            "config_name": "synth-count",
            "data_files": [{"split": "sample", "path": "data/synth-count/sample.parquet"}],
            "default": True,
        },
        {
            "config_name": "synth-color",
            "data_files": [{"split": "sample", "path": "data/synth-color/sample.parquet"}],
        },
    ]
    kit = data["videorl_kit"]
    assert kit["kit_version"]
    assert [(s["id"], s["version"], s["verifier"]) for s in kit["specs"]] == [
        ("synth-count", 1, {"name": "numeric", "version": 2}),
        ("synth-color", 1, {"name": "choice", "version": 2}),
    ]
    assert "synth-count" in card.text and "videorl-kit pull my-org/video-tasks@" in card.text
    assert parse_front_matter((folder / "README.md").read_text()) == data


def test_hub_data_source_and_revision_go_into_the_card(tmp_path: Path, task_dir: Path) -> None:
    sha = "0123456789abcdef0123456789abcdef01234567"
    spec = task_dir / "hubdata.yaml"
    spec.write_text(
        "include: _base.yaml\nid: hub-count\nproblem_type: numerical\n"
        f"data: {{hub: {{repo: other-org/clips, revision: {sha}, file: train.jsonl}}}}\n"
    )
    result = publish([spec], "my-org/t", dry_run_dir=tmp_path / "out", sample_limit=0)
    meta = parse_front_matter((tmp_path / "out" / "README.md").read_text())
    assert meta["source_datasets"] == ["other-org/clips"]
    source = meta["videorl_kit"]["specs"][0]["source"]
    assert source == {
        "repo": "other-org/clips",
        "revision": sha,
        "split": "train",
        "file": "train.jsonl",
    }
    assert not any("not a commit sha" in w for w in result.warnings)
    assert pq.read_table(tmp_path / "out" / "data" / "hub-count" / "sample.parquet").num_rows == 0


def test_datasets_load_dataset_reads_the_sample_configs(folder: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    cache = str(tmp_path / "ds-cache")
    count = datasets.load_dataset(str(folder), "synth-count", split="sample", cache_dir=cache)
    assert count.num_rows == 20
    assert count.column_names == [
        "sample_id",
        "row_index",
        "question",
        "answer",
        "options",
        "videos",
        "images",
        "problem_type",
    ]
    first = count[0]
    assert first["sample_id"] == "count-000" and json.loads(first["answer"]) == 0
    assert first["videos"] == ["videos/count_000.mp4"]  # relative media path, no bytes
    assert "count-003" not in count["sample_id"]  # the malformed row is not sampled
    color = datasets.load_dataset(str(folder), "synth-color", split="sample", cache_dir=cache)
    assert color.num_rows == 5 and color[0]["options"] == ["A. Red", "B. Blue", "C. Green"]
    assert json.loads(color[0]["answer"]) == "B"
    default = datasets.load_dataset(str(folder), split="sample", cache_dir=cache)
    assert default.num_rows == 20  # the first spec is the default config


def test_dry_run_refuses_a_non_empty_folder(tmp_path: Path, spec_paths: list[Path]) -> None:
    out = tmp_path / "busy"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(HubError, match="not empty"):
        publish(spec_paths, "org/name", dry_run_dir=out)
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


@pytest.mark.parametrize(
    ("snippet", "tag"),
    [
        ("description: !!python/object/apply:os.system ['echo hi']\n", "python/object/apply"),
        ("description: !function utils.doc_to_text\n", "!function"),
        ("tags: !!set {a: null}\n", "set"),
    ],
)
def test_specs_that_smuggle_code_tags_are_refused(
    tmp_path: Path, task_dir: Path, snippet: str, tag: str
) -> None:
    spec = task_dir / "evil.yaml"
    spec.write_text((task_dir / "count.yaml").read_text() + snippet)
    out = tmp_path / "out"
    with pytest.raises(HubError, match=rf"evil\.yaml:10: YAML tag .*{tag}.* is not allowed"):
        publish([spec], "org/name", dry_run_dir=out)
    assert not out.exists()


def test_invalid_spec_is_refused_with_every_problem(tmp_path: Path, task_dir: Path) -> None:
    spec = task_dir / "broken.yaml"
    spec.write_text(
        (task_dir / "count.yaml").read_text().replace("abs_tol: 0.5", "abs_toll: 0.5") + "fsp: 2\n"
    )
    with pytest.raises(HubError) as info:
        publish([spec], "org/name", dry_run_dir=tmp_path / "out")
    message = str(info.value)
    assert "broken.yaml" in message and "abs_toll" in message and "fsp" in message


def test_unreadable_data_is_a_clear_error_unless_sampling_is_off(
    tmp_path: Path, task_dir: Path
) -> None:
    (task_dir / "data" / "count.jsonl").unlink()
    with pytest.raises(
        HubError, match=r"count\.yaml: cannot read the task's data.*--sample-rows 0"
    ):
        publish([task_dir / "count.yaml"], "org/name", dry_run_dir=tmp_path / "a")
    result = publish(
        [task_dir / "count.yaml"], "org/name", dry_run_dir=tmp_path / "b", sample_limit=0
    )
    assert result.specs[0]["sample_rows"] == 0


def test_duplicate_spec_ids_are_refused(tmp_path: Path, task_dir: Path) -> None:
    copy = task_dir / "count-copy.yaml"
    copy.write_text((task_dir / "count.yaml").read_text())
    with pytest.raises(HubError, match="spec id 'synth-count' is also used by"):
        publish([task_dir / "count.yaml", copy], "org/name", dry_run_dir=tmp_path / "out")


@pytest.mark.parametrize("repo", ["no-slash", "a/b/c", "org/../x", "org/name@main", ""])
def test_bad_repo_ids_are_refused(tmp_path: Path, spec_paths: list[Path], repo: str) -> None:
    with pytest.raises(HubError, match="invalid repo id"):
        publish(spec_paths, repo, dry_run_dir=tmp_path / "out")


def test_every_public_name_of_the_package_resolves() -> None:
    import videorl_kit.hub as hub

    assert sorted(hub.__all__) == sorted(hub._EXPORTS)
    for name in hub.__all__:
        assert getattr(hub, name) is not None


def test_a_per_row_spec_publishes_with_every_type_pinned(tmp_path: Path) -> None:
    from tests.public_layout import write_mixed
    from videorl_kit.core.problem_types import ProblemType

    spec_path = write_mixed(tmp_path / "src")
    out = tmp_path / "dry"
    publish([spec_path], "my-org/mixed", dry_run_dir=out, license="apache-2.0")
    published = yaml.safe_load((out / "specs" / "mixed.yaml").read_text())
    assert published["problem_type"] == "from_row" and published["verifier"] is None
    assert set(published["verifiers"]) == {t.value for t in ProblemType}
    assert published["verifiers"]["numerical"]["params"] == {"abs_tol": 0.5}
    assert published["verifiers"]["ocr"] == {"name": "wer", "version": 2, "params": {}}
    reloaded = load_spec(out / "specs" / "mixed.yaml")
    assert reloaded.routes_per_row and len(reloaded.verifiers) == len(ProblemType)
    (entry,) = Manifest.model_validate_json((out / MANIFEST_NAME).read_text()).specs
    assert entry.verifier["name"] == "per-row"
    assert entry.verifier["by_problem_type"]["numerical"] == "numeric@2"
