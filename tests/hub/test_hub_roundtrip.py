"""Publish to and pull from a loopback Hub server through the real huggingface_hub client."""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import HfApi

from tests.hub.hub_server import HubServer
from videorl_kit.hf.manifest import MANIFEST_NAME
from videorl_kit.hub import HubError, HubIntegrityError, publish, pull, resolved_spec_data
from videorl_kit.spec import load_spec

REPO = "my-org/video-tasks"


def _resolved(paths: list[Path]) -> dict[str, dict]:
    return {spec.id: resolved_spec_data(spec) for spec in map(load_spec, paths)}


def test_publish_uploads_everything_in_one_commit(hub: HubServer, spec_paths: list[Path]) -> None:
    result = publish(spec_paths, REPO, endpoint=hub.url)
    head = hub.head(REPO)
    assert result.revision == head.oid and result.created_commit
    assert hub.count("POST", f"/api/datasets/{REPO}/commit/") == 1
    assert result.commit_url == f"{hub.url}/datasets/{REPO}/commit/{head.oid}"
    assert set(head.tree) == {".gitattributes", *result.files}  # the Hub's own file stays
    assert result.specs[0]["uri"] == f"hf://{REPO}@{head.oid}/specs/synth-count.yaml"
    assert head.title == "videorl-kit publish: synth-count v1, synth-color v1"
    assert not hub.repo(REPO).private


def test_pull_by_repo_id_and_by_revision_gives_the_published_specs(
    hub: HubServer, spec_paths: list[Path], tmp_path: Path
) -> None:
    result = publish(spec_paths, REPO, endpoint=hub.url)
    expected = _resolved(spec_paths)
    for ref, dest in [(REPO, None), (f"{REPO}@{result.revision}", tmp_path / "pulled")]:
        pulled = pull(ref, dest=dest, endpoint=hub.url)
        assert pulled.revision == result.revision
        assert {s.id: resolved_spec_data(s) for s in pulled.specs} == expected
        for spec in pulled.specs:
            (record,) = spec.provenance
            assert record["repo"] == REPO and record["revision"] == result.revision
            assert record["uri"] == f"hf://{REPO}@{result.revision}/specs/{spec.id}.yaml"
            assert len(record["sha256"]) == 64
        if dest is not None:
            assert pulled.local_dir == dest.resolve()
            assert (dest / "specs" / "synth-count.yaml").is_file()
    assert pull(f"{REPO}@main", endpoint=hub.url).to_dict()["requested_revision"] == "main"


def test_pulling_an_older_revision_after_a_second_publish_gives_the_old_spec(
    hub: HubServer, task_dir: Path
) -> None:
    spec = task_dir / "count.yaml"
    first = publish([spec], REPO, endpoint=hub.url)
    HfApi(endpoint=hub.url).create_tag(REPO, tag="v1", repo_type="dataset")
    spec.write_text(spec.read_text().replace("abs_tol: 0.5", "abs_tol: 1.5") + "version: 2\n")
    second = publish([spec], REPO, endpoint=hub.url)
    assert second.revision != first.revision
    for ref, version, tol in [
        (f"{REPO}@{first.revision}", 1, 0.5),
        (f"{REPO}@v1", 1, 0.5),
        (REPO, 2, 1.5),
        (f"{REPO}@{second.revision}", 2, 1.5),
    ]:
        (pulled_spec,) = pull(ref, endpoint=hub.url).specs
        assert (pulled_spec.version, pulled_spec.verifier.params["abs_tol"]) == (version, tol), ref


def test_publishing_identical_content_again_creates_no_commit(
    hub: HubServer, spec_paths: list[Path]
) -> None:
    first = publish(spec_paths, REPO, endpoint=hub.url)
    again = publish(spec_paths, REPO, endpoint=hub.url)
    assert again.revision == first.revision and not again.created_commit
    assert hub.count("POST", f"/api/datasets/{REPO}/commit/") == 1


def test_a_new_publish_removes_the_files_of_dropped_specs(
    hub: HubServer, spec_paths: list[Path]
) -> None:
    HfApi(endpoint=hub.url).create_repo(REPO, repo_type="dataset")
    HfApi(endpoint=hub.url).upload_file(
        path_or_fileobj=b"user notes\n", path_in_repo="notes.txt", repo_id=REPO, repo_type="dataset"
    )
    publish(spec_paths, REPO, endpoint=hub.url)
    result = publish(spec_paths[:1], REPO, endpoint=hub.url)
    assert result.deleted == ["data/synth-color/sample.parquet", "specs/synth-color.yaml"]
    tree = set(hub.head(REPO).tree)
    assert "specs/synth-color.yaml" not in tree and {"notes.txt", ".gitattributes"} <= tree
    assert [s.id for s in pull(REPO, endpoint=hub.url).specs] == ["synth-count"]


def test_a_tampered_file_on_the_server_is_named(hub: HubServer, spec_paths: list[Path]) -> None:
    result = publish(spec_paths, REPO, endpoint=hub.url)
    original = hub.read(REPO, "specs/synth-count.yaml")
    hub.tamper_blob(
        REPO, "specs/synth-count.yaml", original.replace(b"abs_tol: 0.5", b"abs_tol: 9.0")
    )
    with pytest.raises(HubIntegrityError) as info:
        pull(f"{REPO}@{result.revision}", endpoint=hub.url)
    message = str(info.value)
    assert "specs/synth-count.yaml: sha256" in message and "from the manifest" in message
    assert "synth-color" not in message  # intact files are not blamed


def test_a_same_size_tampered_sample_is_named(hub: HubServer, spec_paths: list[Path]) -> None:
    publish(spec_paths, REPO, endpoint=hub.url)
    path = "data/synth-color/sample.parquet"
    data = bytearray(hub.read(REPO, path))
    data[len(data) // 2] ^= 0xFF
    hub.tamper_blob(REPO, path, bytes(data))
    with pytest.raises(
        HubIntegrityError, match=r"1 file\(s\) do not match.*sample\.parquet: sha256"
    ):
        pull(REPO, endpoint=hub.url)


def test_a_file_missing_from_the_repo_is_named(hub: HubServer, spec_paths: list[Path]) -> None:
    result = publish(spec_paths, REPO, endpoint=hub.url)
    hub.drop_from_history(REPO, "specs/synth-color.yaml")
    with pytest.raises(HubIntegrityError, match=r"specs/synth-color\.yaml: missing"):
        pull(f"{REPO}@{result.revision}", endpoint=hub.url)


def test_a_listed_file_the_server_cannot_serve_is_named(
    hub: HubServer, spec_paths: list[Path]
) -> None:
    publish(spec_paths, REPO, endpoint=hub.url)
    hub.lose_blob(REPO, "data/synth-count/sample.parquet")
    with pytest.raises(HubError, match=r"data/synth-count/sample\.parquet: file not found"):
        pull(REPO, endpoint=hub.url)


def test_a_missing_manifest_is_a_clear_error(hub: HubServer, spec_paths: list[Path]) -> None:
    publish(spec_paths, REPO, endpoint=hub.url)
    hub.drop_from_history(REPO, MANIFEST_NAME)
    with pytest.raises(HubIntegrityError, match=rf"{MANIFEST_NAME}: missing"):
        pull(REPO, endpoint=hub.url)


def test_a_local_copy_changed_after_pulling_is_named(
    hub: HubServer, spec_paths: list[Path], tmp_path: Path
) -> None:
    publish(spec_paths, REPO, endpoint=hub.url)
    dest = tmp_path / "copy"
    pull(REPO, dest=dest, endpoint=hub.url)
    (dest / "README.md").write_text("edited by hand\n")
    with pytest.raises(HubIntegrityError, match=r"README\.md: size"):
        pull(REPO, dest=dest, endpoint=hub.url)


def test_a_spec_with_code_tags_uploaded_by_hand_is_refused(
    hub: HubServer, spec_paths: list[Path], tmp_path: Path
) -> None:
    """A hand-made commit that adds a code tag and fixes the manifest is still refused."""
    import json

    from videorl_kit.hf.manifest import sha256_file

    publish(spec_paths, REPO, endpoint=hub.url)
    local = pull(REPO, dest=tmp_path / "copy", endpoint=hub.url).local_dir
    spec_file = local / "specs" / "synth-count.yaml"
    spec_file.write_text(spec_file.read_text() + "x: !!python/object/apply:os.system [date]\n")
    manifest = json.loads((local / MANIFEST_NAME).read_text())
    manifest["files"]["specs/synth-count.yaml"] = {
        "sha256": sha256_file(spec_file),
        "size": spec_file.stat().st_size,
    }
    api = HfApi(endpoint=hub.url)
    api.upload_file(
        path_or_fileobj=str(spec_file),
        path_in_repo="specs/synth-count.yaml",
        repo_id=REPO,
        repo_type="dataset",
    )
    api.upload_file(
        path_or_fileobj=json.dumps(manifest).encode(),
        path_in_repo=MANIFEST_NAME,
        repo_id=REPO,
        repo_type="dataset",
    )
    with pytest.raises(HubError, match=r"synth-count\.yaml:\d+: YAML tag .*python/object/apply"):
        pull(REPO, endpoint=hub.url)


def test_unknown_repo_and_revision_are_clear_errors(hub: HubServer, spec_paths: list[Path]) -> None:
    with pytest.raises(HubError, match=r"resolving my-org/nope@main: repository not found"):
        pull("my-org/nope", endpoint=hub.url)
    publish(spec_paths, REPO, endpoint=hub.url)
    with pytest.raises(
        HubError, match=r"resolving my-org/video-tasks@no-such-tag: revision not found"
    ):
        pull(f"{REPO}@no-such-tag", endpoint=hub.url)
    with pytest.raises(HubError, match="revision not found"):
        pull(f"{REPO}@{'f' * 40}", endpoint=hub.url)


def test_an_unreachable_hub_is_a_clear_error(spec_paths: list[Path]) -> None:
    with pytest.raises(HubError, match="cannot reach the Hub"):
        publish(spec_paths, REPO, endpoint="http://127.0.0.1:9")


def test_private_repos_need_the_token_which_hf_token_provides(
    tmp_path: Path, spec_paths: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = HubServer.start(tmp_path / "private-hub", token="hf_test_secret")
    try:
        with pytest.raises(HubError, match="401"):
            publish(spec_paths, REPO, endpoint=server.url, token="hf_wrong")
        result = publish(
            spec_paths, REPO, endpoint=server.url, token="hf_test_secret", private=True
        )
        assert server.repo(REPO).private
        with pytest.raises(HubError, match=r"repository not found.*HF_TOKEN"):
            pull(REPO, endpoint=server.url)
        monkeypatch.setenv("HF_TOKEN", "hf_test_secret")
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        pulled = pull(f"{REPO}@{result.revision}")
        assert [s.id for s in pulled.specs] == ["synth-count", "synth-color"]
    finally:
        server.stop()
