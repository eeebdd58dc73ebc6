"""The public training-set specs (task_specs/datasets/): the shipped specs themselves load their
three-row fixtures, served under the spec's own repo and revision by a Hub server on loopback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from huggingface_hub import HfApi

from tests.hub.hub_server import HubServer
from videorl_kit.spec import load_spec
from videorl_kit.spec.data import iter_samples

REPO = Path(__file__).resolve().parents[2]
SPECS = REPO / "task_specs" / "datasets"
FIXTURES = SPECS / "fixtures"
SHIPPED = sorted(p for p in SPECS.glob("*.yaml") if not p.name.startswith("_"))


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A loopback Hub holding each fixture at the repo, revision and file its spec names."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    server = HubServer.start(tmp_path / "hub")
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    api = HfApi(endpoint=server.url)
    for spec_path in SHIPPED:
        hub_data = load_spec(spec_path).data.hub
        assert hub_data is not None
        fixture = next(FIXTURES.glob(f"*/{hub_data.file}"))
        api.create_repo(hub_data.repo, repo_type="dataset", exist_ok=True)
        api.upload_file(
            path_or_fileobj=fixture.read_bytes(), path_in_repo=hub_data.file,
            repo_id=hub_data.repo, repo_type="dataset", revision=hub_data.revision,
        )  # fmt: skip
    yield server
    server.stop()


@pytest.mark.parametrize("spec_path", SHIPPED, ids=lambda p: p.stem)
def test_unchecked_revisions_say_so(spec_path: Path) -> None:
    spec = load_spec(spec_path)
    assert spec.data.hub is not None
    if not re.fullmatch(r"[0-9a-f]{40}", spec.data.hub.revision):
        assert "NOT CHECKED" in (spec.description or "")
        assert (
            "REVISION NOT CHECKED"
            in (SPECS / "_video_r1_base.yaml").read_text()
            + (SPECS / "_onethinker_base.yaml").read_text()
        )


def test_video_r1_parts_read_the_published_layout(hub: HubServer) -> None:
    video = list(iter_samples(load_spec(SPECS / "video-r1-260k-video.yaml")))
    image = list(iter_samples(load_spec(SPECS / "video-r1-260k-image.yaml")))
    assert [(s.sample_id, s.problem_type.value, s.answer) for s in video] == [
        ("70001", "multiple_choice", "B"), ("70002", "numerical", "3"),
    ]  # fmt: skip
    assert video[0].options == ["A. a cup", "B. a phone", "C. a book", "D. a pen"]
    assert video[0].videos[0].parts[-3:] == ("LLaVA-Video-178K", "videos", "clip_0001.mp4")
    assert not video[0].images and all(s.skip_reason is None for s in video)
    assert [(s.sample_id, s.problem_type.value, s.answer) for s in image] == [
        ("70003", "ocr", "STOP"),
    ]  # fmt: skip
    assert image[0].images[0].name == "sign_0003.jpg" and not image[0].videos


def test_onethinker_parts_read_the_published_layout(hub: HubServer) -> None:
    video = list(iter_samples(load_spec(SPECS / "onethinker-video.yaml")))
    image = list(iter_samples(load_spec(SPECS / "onethinker-image.yaml")))
    assert [(s.problem_type.value, s.answer) for s in video] == [
        ("temporal_grounding", '{"time": [3.2, 5.8]}'), ("boolean", "Yes"),
    ]  # fmt: skip
    assert [(s.problem_type.value, s.answer, s.images[0].name) for s in image] == [
        ("spatial_grounding", '{"boxes": [35, 227, 437, 932]}', "umbrella_17.jpg"),
    ]  # fmt: skip
