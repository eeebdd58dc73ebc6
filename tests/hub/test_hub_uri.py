"""``hf://`` URIs: parsing, resolution to a commit sha, and spec includes through the loader."""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import HfApi

from tests.hub.hub_server import HubServer
from videorl_kit.hub import (
    HubError,
    HubIntegrityError,
    format_hf_uri,
    parse_hf_uri,
    parse_repo_ref,
    publish,
    resolve_hf_uri,
)
from videorl_kit.spec import SpecError, load_spec

REPO = "my-org/video-tasks"


@pytest.mark.parametrize(
    ("uri", "repo", "revision", "path"),
    [
        ("hf://org/name@main/specs/a.yaml", "org/name", "main", "specs/a.yaml"),
        ("hf://datasets/org/name@v1.2/a.yaml", "org/name", "v1.2", "a.yaml"),
        ("hf://org/name/a.yaml", "org/name", None, "a.yaml"),
        ("hf://org/name@refs%2Fpr%2F3/x/./y.yaml", "org/name", "refs/pr/3", "x/y.yaml"),
        (f"hf://Org_1/na.me-2@{'a' * 40}/b.yml", "Org_1/na.me-2", "a" * 40, "b.yml"),
    ],
)
def test_parse_hf_uri(uri: str, repo: str, revision: str | None, path: str) -> None:
    parsed = parse_hf_uri(uri)
    assert (parsed.repo, parsed.revision, parsed.path) == (repo, revision, path)
    assert parse_hf_uri(format_hf_uri(repo, revision, path)) == parsed


@pytest.mark.parametrize(
    "uri",
    [
        "org/name@main/a.yaml",
        "hf://org/name@main",
        "hf://org/name@main/",
        "hf://org/name@main/../../etc/passwd",
        "hf://org/name@main//etc/passwd",
        "hf://org/na$me@main/a.yaml",
        "hf://org/name@a..b/a.yaml",
    ],
)
def test_bad_hf_uris_are_refused(uri: str) -> None:
    with pytest.raises(HubError, match="invalid"):
        parse_hf_uri(uri)


def test_parse_repo_ref() -> None:
    assert parse_repo_ref("org/name").revision is None
    assert parse_repo_ref(f"org/name@{'0' * 40}").is_pinned
    assert not parse_repo_ref("org/name@main").is_pinned
    with pytest.raises(HubError, match="invalid repo id"):
        parse_repo_ref("name-only@main")


@pytest.fixture
def published(hub: HubServer, spec_paths: list[Path], monkeypatch: pytest.MonkeyPatch) -> str:
    """Publish the demo specs and point HF_ENDPOINT at the server (as a user would)."""
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    result = publish(spec_paths, REPO)
    assert result.revision is not None
    return result.revision


def test_resolve_hf_uri_pins_a_branch_to_its_commit(hub: HubServer, published: str) -> None:
    resolved = resolve_hf_uri(f"hf://{REPO}@main/specs/synth-count.yaml")
    assert resolved.revision == published and resolved.repo == REPO
    assert resolved.path == "specs/synth-count.yaml"
    assert resolved.local_path.read_bytes() == hub.read(REPO, "specs/synth-count.yaml")
    record = resolved.provenance()
    assert record["revision"] == published and len(record["sha256"]) == 64


def test_resolve_hf_uri_checks_the_file_against_the_manifest(
    hub: HubServer, published: str
) -> None:
    hub.tamper_blob(REPO, "specs/synth-color.yaml", b"id: synth-color\nversion: 99\n")
    with pytest.raises(
        HubIntegrityError,
        match=r"specs/synth-color\.yaml: sha256 .* in the repo's videorl_kit_manifest",
    ):
        resolve_hf_uri(f"hf://{REPO}@{published}/specs/synth-color.yaml")


def test_resolve_hf_uri_refuses_yaml_with_code_tags(hub: HubServer, published: str) -> None:
    HfApi(endpoint=hub.url).upload_file(
        path_or_fileobj=b"id: x\nfn: !function utils.process_docs\n",
        path_in_repo="extra/evil.yaml",
        repo_id=REPO,
        repo_type="dataset",
    )
    with pytest.raises(HubError, match=r"evil\.yaml:2: YAML tag '!function' is not allowed"):
        resolve_hf_uri(f"hf://{REPO}@main/extra/evil.yaml")


def test_resolve_hf_uri_names_a_missing_file(published: str) -> None:
    with pytest.raises(HubError, match=r"specs/nope\.yaml: file not found"):
        resolve_hf_uri(f"hf://{REPO}@{published}/specs/nope.yaml")


def test_an_hf_include_resolves_through_the_loader_and_records_the_revision(
    published: str, tmp_path: Path
) -> None:
    local = tmp_path / "mine.yaml"
    local.write_text(
        f"include: hf://{REPO}@main/specs/synth-count.yaml\n"
        "id: my-count\n"
        "verifier: {name: numeric, version: 2, params: {abs_tol: 2.0}}\n"
    )
    spec = load_spec(local)
    assert spec.id == "my-count" and spec.verifier.params["abs_tol"] == 2.0
    assert spec.budget.video.max_frames == 16  # inherited from the published spec
    (record,) = spec.provenance
    assert record["repo"] == REPO and record["revision"] == published
    assert record["path"] == "specs/synth-count.yaml"
    assert record["uri"] == f"hf://{REPO}@main/specs/synth-count.yaml"


def test_a_top_level_hf_spec_loads_by_revision(published: str) -> None:
    spec = load_spec(f"hf://{REPO}@{published}/specs/synth-color.yaml")
    assert spec.id == "synth-color"
    assert spec.provenance[0]["revision"] == published


def test_a_failing_hf_include_is_reported_at_the_include_line(
    published: str, tmp_path: Path
) -> None:
    local = tmp_path / "mine.yaml"
    local.write_text(f"id: x\ninclude: hf://{REPO}@main/specs/gone.yaml\n")
    with pytest.raises(SpecError, match=r"mine\.yaml:2: include: .*gone\.yaml.*file not found"):
        load_spec(local)


def test_a_pinned_uri_resolves_from_the_cache_when_the_hub_is_gone(
    hub: HubServer, published: str
) -> None:
    uri = f"hf://{REPO}@{published}/specs/synth-count.yaml"
    first = resolve_hf_uri(uri)
    hub.stop()
    again = resolve_hf_uri(uri)
    assert (again.revision, again.sha256) == (first.revision, first.sha256)
    with pytest.raises(HubError, match="cannot reach the Hub"):
        resolve_hf_uri(f"hf://{REPO}@main/specs/synth-count.yaml")  # a branch needs the Hub
