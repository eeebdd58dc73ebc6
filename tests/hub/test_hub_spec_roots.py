"""A spec from the Hub never reads outside its own repo, whatever it writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import HfApi

from tests.hub.hub_server import HubServer
from videorl_kit.spec import SpecError, load_spec

REPO = "evil-org/tasks"
SPEC = """\
id: evil
version: 1
problem_type: numerical
data:
  path: data/rows.jsonl
prompt: {template: "{{ question }}"}
"""


@pytest.fixture
def upload(hub: HubServer, monkeypatch: pytest.MonkeyPatch):
    """Put raw files into a Hub repo (no manifest, as an attacker would) and return a URI."""
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    api = HfApi(endpoint=hub.url)
    api.create_repo(REPO, repo_type="dataset")

    def _upload(path: str, text: str) -> str:
        api.upload_file(
            path_or_fileobj=text.encode(), path_in_repo=path, repo_id=REPO, repo_type="dataset"
        )
        return f"hf://{REPO}@main/{path}"

    return _upload


def messages(target: str | Path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(target)
    return [str(issue) for issue in info.value.issues]


def test_a_hub_spec_cannot_allow_absolute_paths(upload):
    uri = upload(
        "specs/evil.yaml", SPEC.replace("  path:", "  allow_absolute_paths: true\n  path:")
    )
    (message,) = messages(uri)
    assert message.startswith(f"{uri}:5: data.allow_absolute_paths: a spec from the Hub cannot")


def test_a_local_spec_cannot_inherit_allow_absolute_paths_from_the_hub(upload, tmp_path):
    uri = upload("specs/base.yaml", "data: {path: x.jsonl, allow_absolute_paths: true}\n")
    local = tmp_path / "mine.yaml"
    local.write_text(f"include: {uri}\n" + SPEC.replace("data:\n  path: data/rows.jsonl\n", ""))
    (message,) = messages(local)
    assert message.startswith(f"{uri}:1: data.allow_absolute_paths: a spec from the Hub cannot")


@pytest.mark.parametrize("path", ["../../../../../../../etc/passwd", "/etc/passwd"])
def test_a_hub_spec_cannot_name_data_outside_its_snapshot(upload, path):
    uri = upload("specs/evil.yaml", SPEC.replace("data/rows.jsonl", path))
    (message,) = messages(uri)
    assert message.startswith(f"{uri}:5: data.path: {path!r} ")
    assert "outside its root" in message or "leaves its root" in message


@pytest.mark.parametrize("entry", ["../../../../etc/passwd", "/etc/passwd"])
def test_a_hub_spec_cannot_include_files_outside_its_repo(upload, entry):
    uri = upload("specs/evil.yaml", f"include: {entry}\n" + SPEC)
    (message,) = messages(uri)
    assert message.startswith(f"{uri}:1: include: cannot fetch ")
    assert "must stay inside the repo" in message or "not found" in message


def _publish_forged(hub: HubServer, spec_paths: list[Path], tmp_path: Path, forge) -> None:
    """Publish a repo whose count spec is rewritten by ``forge``, with a matching manifest.

    An attacker controls the whole repo, manifest included: the hashes all agree.
    """
    import hashlib
    import json

    from videorl_kit.hf.manifest import MANIFEST_NAME
    from videorl_kit.hub import build_repo_folder

    folder = tmp_path / "forged"
    build_repo_folder(spec_paths, folder, repo_id=REPO)
    spec_file = folder / "specs" / "synth-count.yaml"
    spec_file.write_text(forge(spec_file.read_text()))
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    data = spec_file.read_bytes()
    manifest["files"]["specs/synth-count.yaml"].update(
        sha256=hashlib.sha256(data).hexdigest(), size=len(data)
    )
    (folder / MANIFEST_NAME).write_text(json.dumps(manifest))
    api = HfApi(endpoint=hub.url)
    api.create_repo(REPO, repo_type="dataset", exist_ok=True)
    api.upload_folder(folder_path=str(folder), repo_id=REPO, repo_type="dataset")


@pytest.mark.parametrize(
    ("forge", "problem"),
    [
        (lambda t: t + "extra: " + "[" * 200 + "]" * 200 + "\n", "nest deeper than 64"),
        (lambda t: t + "extra: " + "[" * 5000 + "]" * 5000 + "\n", "nesting depth"),
        (lambda t: t.replace("allow_absolute_paths: false", "allow_absolute_paths: true"),
         "data.allow_absolute_paths: a spec from the Hub cannot read outside its own folder"),
        (lambda t: t.replace("path: data/count.jsonl", "path: ../../../../../etc/passwd"),
         "data.path: '../../../../../etc/passwd' leaves its root"),
    ],
    ids=["nesting-200", "nesting-5000", "allow-absolute", "data-outside"],
)  # fmt: skip
def test_a_forged_pulled_spec_is_refused_in_one_line(
    hub: HubServer, spec_paths: list[Path], tmp_path: Path, forge, problem
):
    from videorl_kit.hub import HubError, pull

    _publish_forged(hub, spec_paths, tmp_path, forge)
    with pytest.raises(HubError) as info:
        pull(REPO, dest=tmp_path / "pulled", endpoint=hub.url)
    assert problem in str(info.value)
    assert "Traceback" not in str(info.value)
