"""Data and media paths stay inside the spec's root unless the spec allows absolute paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.spec.conftest import MINIMAL
from videorl_kit.core.errors import UserError
from videorl_kit.hf.manifest import MANIFEST_NAME
from videorl_kit.spec import SpecError, load_spec
from videorl_kit.spec.data import data_file, iter_samples
from videorl_kit.spec.paths import (
    ROOT_RULE,
    PathRefused,
    PathRoots,
    SpecRoot,
    find_spec_root,
    root_folders,
)

ALLOW = "  allow_absolute_paths: true\n"


def messages(path: Path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return [str(issue) for issue in info.value.issues]


def with_data(path: str, media_root: str = "media", extra: str = "") -> str:
    return MINIMAL.replace("  path: rows.jsonl\n  media_root: media\n", "").replace(
        "data:\n", f"data:\n  path: {path}\n  media_root: {media_root}\n{extra}"
    )


def write_rows(path: Path, videos: list[str]) -> None:
    rows = [
        {"id": f"r{i}", "problem": "q", "answer": 1, "videos": [v]} for i, v in enumerate(videos)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


# -- paths written in the spec ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("path", "../../../../../../etc/passwd", "leaves its root"),
        ("path", "/etc/passwd", "is outside its root"),
        ("media_root", "/", "is outside its root"),
        ("media_root", "../..", "leaves its root"),
    ],
)
def test_spec_paths_outside_the_root_are_refused_at_their_line(
    write, tmp_path, field, value, problem
):
    text = with_data(value) if field == "path" else with_data("rows.jsonl", value)
    (message,) = messages(write("t.yaml", text))
    line = 5 if field == "path" else 6
    assert message.startswith(f"t.yaml:{line}: data.{field}: {value!r} {problem} ({tmp_path})")
    assert message.endswith(f"; {ROOT_RULE}")
    assert ("allow_absolute_paths: true to read it" in message) == value.startswith("/")


def test_a_link_pointing_out_is_refused_unless_absolute_paths_are_allowed(write, tmp_path):
    (tmp_path / "rows.jsonl").symlink_to("/etc/hostname")
    (message,) = messages(write("t.yaml", MINIMAL))
    assert message.startswith("t.yaml:5: data.path: 'rows.jsonl' is a link that points outside")
    spec = load_spec(write("t.yaml", MINIMAL.replace("  media_root", ALLOW + "  media_root")))
    assert data_file(spec) == spec.source_file.parent / "rows.jsonl"


def test_absolute_paths_are_allowed_when_the_spec_says_so(write, tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-shared"
    (outside / "videos").mkdir(parents=True)
    write_rows(outside / "rows.jsonl", ["a.mp4"])
    text = with_data(str(outside / "rows.jsonl"), str(outside / "videos"), ALLOW)
    (sample,) = iter_samples(load_spec(write("t.yaml", text)))
    assert sample.videos == [outside / "videos" / "a.mp4"]


def test_relative_paths_never_climb_out_even_when_absolute_paths_are_allowed(write):
    (message,) = messages(write("t.yaml", with_data("../../../etc/passwd", extra=ALLOW)))
    assert "data.path: '../../../etc/passwd' leaves its root" in message


def test_a_marker_or_the_working_directory_makes_the_project_folder_the_root(
    write, tmp_path, monkeypatch
):
    (tmp_path / "data").mkdir()
    write_rows(tmp_path / "data" / "rows.jsonl", ["a.mp4"])
    spec_file = write("specs/t.yaml", with_data("../data/rows.jsonl", "../data"))
    assert find_spec_root(spec_file) == SpecRoot(tmp_path)  # run from the project folder
    monkeypatch.chdir(tmp_path / "data")  # elsewhere, and no marker: the spec's own folder
    assert find_spec_root(spec_file) == SpecRoot(tmp_path / "specs")
    assert "leaves its root" in messages(spec_file)[0]
    (tmp_path / "pyproject.toml").touch()
    assert find_spec_root(spec_file) == SpecRoot(tmp_path)
    (sample,) = iter_samples(load_spec(spec_file))
    assert sample.videos == [spec_file.parent / "../data" / "a.mp4"]


def test_programmatic_changes_are_checked_where_paths_are_resolved(write, tmp_path, rows):
    spec = load_spec(write("t.yaml", MINIMAL))
    moved = spec.model_copy(update={"data": spec.data.model_copy(update={"path": "/etc/passwd"})})
    with pytest.raises(PathRefused, match=r"data\.path: '/etc/passwd' is outside its root"):
        data_file(moved)


def test_a_fifo_as_data_file_is_refused(write, tmp_path):
    os.mkfifo(tmp_path / "rows.jsonl")
    assert messages(write("t.yaml", MINIMAL)) == [
        "t.yaml:5: data.path: 'rows.jsonl' is not a regular file (a FIFO)"
    ]
    spec = load_spec(write("t.yaml", MINIMAL.replace("rows.jsonl", "later.jsonl")))
    os.mkfifo(tmp_path / "later.jsonl")  # appears after loading: refused where it is opened
    with pytest.raises(UserError, match=r"'later\.jsonl' is not a regular file \(a FIFO\)"):
        data_file(spec)


# -- paths written in data rows -----------------------------------------------------------------


def test_media_paths_in_rows_stay_inside_the_media_root(write, tmp_path):
    media = tmp_path / "media"
    media.mkdir()
    (media / "link.mp4").symlink_to("/etc/hostname")
    os.mkfifo(media / "pipe.mp4")
    videos = [
        "ok.mp4",
        "../../../etc/passwd",
        "/etc/passwd",
        "link.mp4",
        "pipe.mp4",
        "../media/ok.mp4",
    ]
    write_rows(tmp_path / "rows.jsonl", videos)
    samples = list(iter_samples(load_spec(write("t.yaml", MINIMAL))))
    reasons = [s.skip_reason for s in samples]
    assert reasons[0] is None and samples[0].videos == [media / "ok.mp4"]
    assert reasons[1] == (
        f"row 2 (id 'r1'): field 'videos': '../../../etc/passwd' leaves its root ({media})"
    )
    assert reasons[2].startswith(
        f"row 3 (id 'r2'): field 'videos': '/etc/passwd' is outside its root ({media})"
    )
    assert reasons[2].endswith("set data.allow_absolute_paths: true to read it")
    assert reasons[3].startswith(
        "row 4 (id 'r3'): field 'videos': 'link.mp4' is a link that points outside"
    )
    assert reasons[4] == (
        "row 5 (id 'r4'): field 'videos': 'pipe.mp4' is not a regular file (a FIFO)"
    )
    assert reasons[5] is None  # climbs out and back in: still inside


def test_allowing_absolute_paths_accepts_absolute_media_and_links_but_not_climbing(write, tmp_path):
    media = tmp_path / "media"
    media.mkdir()
    (media / "link.mp4").symlink_to("/etc/hostname")
    write_rows(tmp_path / "rows.jsonl", ["/data/v.mp4", "link.mp4", "../../x.mp4"])
    text = MINIMAL.replace("  media_root", ALLOW + "  media_root")
    samples = list(iter_samples(load_spec(write("t.yaml", text))))
    assert [s.videos for s in samples[:2]] == [[Path("/data/v.mp4")], [media / "link.mp4"]]
    assert "'../../x.mp4' leaves its root" in samples[2].skip_reason


# -- Hub repos and the Hub cache ----------------------------------------------------------------


def test_a_spec_in_a_pulled_repo_cannot_allow_absolute_paths(write, tmp_path):
    write(MANIFEST_NAME, "{}")
    text = MINIMAL.replace("  media_root", ALLOW + "  media_root")
    (message,) = messages(write("specs/t.yaml", text))
    assert message == (
        "specs/t.yaml:6: data.allow_absolute_paths: a spec from the Hub cannot read outside its "
        "own folder; set data.allow_absolute_paths: true in a local spec that includes it"
    )


def test_a_pulled_repo_cannot_include_files_outside_it(write, tmp_path):
    write("repo/" + MANIFEST_NAME, "{}")
    write("outside.yaml", "version: 1\n")
    (message,) = messages(write("repo/specs/t.yaml", "include: ../../outside.yaml\n" + MINIMAL))
    assert message == (
        f"repo/specs/t.yaml:1: include: '../../outside.yaml' leaves its root ({tmp_path / 'repo'})"
    )


def test_hub_cache_snapshots_cover_the_blobs_their_links_point_to(tmp_path):
    repo = tmp_path / "datasets--org--name"
    (repo / "blobs").mkdir(parents=True)
    (repo / "blobs" / "abc").write_text("{}\n")
    snapshot = repo / "snapshots" / ("0" * 40)
    (snapshot / "data").mkdir(parents=True)
    (snapshot / "data" / "rows.jsonl").symlink_to("../../../blobs/abc")
    assert find_spec_root(snapshot / "specs" / "t.yaml") == SpecRoot(snapshot, from_hub=True)
    folders = root_folders(SpecRoot(snapshot, from_hub=True))
    assert folders == (snapshot, repo / "blobs")
    assert PathRoots(folders).resolve("data/rows.jsonl", base=snapshot).exists()
    with pytest.raises(PathRefused, match="leaves its root"):
        PathRoots(folders).resolve("../../../elsewhere/abc", base=snapshot)


def test_an_overridden_spec_keeps_its_root_and_a_typed_path_is_trusted(write, tmp_path, rows):
    from videorl_kit.spec.overrides import apply_overrides

    spec = load_spec(write("t.yaml", MINIMAL.replace("rows.jsonl", "other.jsonl")))
    moved = apply_overrides(spec, ["data.path=rows.jsonl"])  # rebuilt from a dump
    assert data_file(moved) == tmp_path / "rows.jsonl"
    typed = apply_overrides(spec, [f"data.path={tmp_path.parent}/elsewhere.jsonl"])
    assert typed.data.allow_absolute_paths  # the person running the command chose it
    assert data_file(typed) == tmp_path.parent / "elsewhere.jsonl"
    climbing = apply_overrides(spec, ["data.path=../../../etc/passwd"])
    with pytest.raises(PathRefused, match="leaves its root"):
        data_file(climbing)


def test_only_the_named_file_may_include_by_absolute_path(write, tmp_path):
    shared = tmp_path.parent / f"{tmp_path.name}-shared"
    shared.mkdir()
    (shared / "_base.yaml").write_text("version: 1\n")
    text = MINIMAL.replace("version: 1\n", "").replace("  media_root", ALLOW + "  media_root")
    spec = load_spec(write("t.yaml", f"include: {shared / '_base.yaml'}\n" + text))
    assert spec.version == 1
    write("_middle.yaml", f"include: {shared / '_base.yaml'}\ndata: {{{ALLOW.strip()}}}\n")
    (message,) = messages(write("t.yaml", "include: _middle.yaml\n" + text))
    assert message == "_middle.yaml:1: include: the included file is outside its root " + (
        f"({tmp_path})"
    )
