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
