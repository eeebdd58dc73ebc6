"""The public training-set specs (task_specs/datasets/): the shipped specs themselves load their
three-row fixtures, served under the spec's own repo and revision by a Hub server on loopback,
and each Hub revision is marked honestly (a pinned commit names the page it was seen on)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.hub.hub_server import HubServer
from videorl_kit.spec import load_spec
from videorl_kit.spec.data import iter_samples

REPO = Path(__file__).resolve().parents[2]
SPECS = REPO / "task_specs" / "datasets"
FIXTURES = SPECS / "fixtures"


# The specs and bases over a Hub file; the others read a source set from disk in its own
# layout (tests/train/test_videochat_r1_specs.py).
SHIPPED = sorted(
    p
    for p in SPECS.glob("*.yaml")
    if not p.name.startswith("_") and load_spec(p).data.hub is not None
)
BASES = sorted(
    p for p in SPECS.glob("_*.yaml") if "hub" in (yaml.safe_load(p.read_text()).get("data") or {})
)
FULL_COMMIT = re.compile(r"[0-9a-f]{40}")


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A loopback Hub holding each fixture at the repo, revision and file its spec names."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    server = HubServer.start(tmp_path / "hub")
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    for spec_path in SHIPPED:
        hub_data = load_spec(spec_path).data.hub
        assert hub_data is not None
        fixture = next(FIXTURES.glob(f"*/{hub_data.file}"))
        server.serve_dataset_file(
            hub_data.repo, hub_data.file, fixture.read_bytes(), hub_data.revision
        )
    yield server
    server.stop()


def assert_revision_marked(text: str, repo: str, revision: str) -> None:
    """``text`` (a description or a base file) says "NOT CHECKED" for a branch, and names the
    huggingface.co page of a pinned commit (and no "NOT CHECKED") for a full commit."""
    if FULL_COMMIT.fullmatch(revision):
        assert "NOT CHECKED" not in text
        page = rf"https://huggingface\.co/datasets/{re.escape(repo)}/\S*{revision}"
        assert re.search(page, text), f"no huggingface.co page of {repo} at {revision} named"
    else:
        assert "NOT CHECKED" in text, f"revision {revision!r} is not a commit: say NOT CHECKED"


@pytest.mark.parametrize("spec_path", SHIPPED, ids=lambda p: p.stem)
def test_each_description_marks_its_hub_revision(spec_path: Path) -> None:
    spec = load_spec(spec_path)
    assert spec.data.hub is not None
    assert_revision_marked(spec.description or "", spec.data.hub.repo, spec.data.hub.revision)


@pytest.mark.parametrize("base_path", BASES, ids=lambda p: p.stem)
def test_each_base_marks_the_hub_revision_it_sets(base_path: Path) -> None:
    text = base_path.read_text()
    hub = yaml.safe_load(text)["data"]["hub"]
    assert_revision_marked(text, hub["repo"], str(hub["revision"]))


@pytest.mark.parametrize(
    ("text", "revision"),
    [
        ("Hub revision pinned.", "main"),  # a branch that does not say so
        ("Hub revision NOT CHECKED.", "ab" * 20),  # a commit still called unchecked
        ("Seen on https://huggingface.co/datasets/org/name/tree/main.", "ab" * 20),  # no commit
        (f"Seen on https://huggingface.co/datasets/org/other/commit/{'ab' * 20}.", "ab" * 20),
    ],
    ids=["branch-unmarked", "commit-called-unchecked", "page-without-commit", "other-repo"],
)
def test_the_revision_marking_refuses_a_false_claim(text: str, revision: str) -> None:
    with pytest.raises(AssertionError):
        assert_revision_marked(text, "org/name", revision)


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
