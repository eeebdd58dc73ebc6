"""The shipped demo specs (task_specs/synth-*.yaml) against freshly generated data.

The specs are copied next to a generated ``data/synth`` folder in a temporary tree with
the same layout as the repository, then loaded, read, rendered and scored end to end:
a response holding the gold answer must get the full reward.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.synth.conftest import N_PER_TASK
from tests.synth.test_synth_ground_truth import SOLUTIONS
from videorl_kit.rewards.router import reward_function_from_spec
from videorl_kit.spec import load_spec
from videorl_kit.spec.data import iter_samples
from videorl_kit.spec.prompt import render_prompt
from videorl_kit.synth import TASKS

REPO = Path(__file__).resolve().parents[2]
SPEC_DIR = REPO / "task_specs"
SPEC_FILES = sorted(SPEC_DIR.glob("synth-*.yaml"))

TASK_OF_SPEC = {f"synth-{task.name.replace('_', '-')}": task for task in TASKS}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory, suite) -> Path:
    """A copy of the repository layout: task_specs/ next to data/synth/ (the shared suite)."""
    root = tmp_path_factory.mktemp("repo")
    shutil.copytree(
        SPEC_DIR, root / "task_specs", ignore=shutil.ignore_patterns("datasets", "eval")
    )
    shutil.copytree(suite[1], root / "data" / "synth")
    (root / "pyproject.toml").touch()  # marks the project root, as in the repository
    return root


def test_one_spec_per_synth_task() -> None:
    assert sorted(p.stem for p in SPEC_FILES) == sorted(TASK_OF_SPEC)


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.stem)
def test_spec_declares_its_task(path: Path) -> None:
    spec = load_spec(path)
    task = TASK_OF_SPEC[path.stem]
    assert spec.id == path.stem and spec.version == 1
    assert spec.problem_type == task.problem_type
    assert spec.data.path == f"../data/synth/{task.name}.jsonl"
    assert spec.data.media_root == "../data/synth"
    assert "synth" in spec.tags and spec.description
    video = spec.budget.video
    assert (video.fps, video.max_frames, video.max_pixels, video.patch) == (2.0, 16, 50176, 28)
    assert spec.reward.format == "answer_tag"
    text = path.read_text()
    assert text.startswith(f"# {path.stem}: ")
    assert "include: _base_video.yaml" in text
    assert (
        f"videorl-kit synth data/synth && videorl-kit build-cache {path.relative_to(REPO)}" in text
    )
    assert "Override:" in text
    template = spec.prompt.template
    assert "<think></think>" in template and "<answer></answer>" in template
    if task.problem_type.value.endswith("grounding") or task.problem_type.value == "tracking":
        assert "original" in template and ("seconds" in template or "pixel" in template)


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.stem)
def test_spec_reads_renders_and_scores_generated_rows(tree: Path, path: Path) -> None:
    spec = load_spec(tree / "task_specs" / path.name)
    reward = reward_function_from_spec(spec)
    samples = list(iter_samples(spec))
    assert len(samples) == N_PER_TASK
    answers = []
    for sample in samples:
        assert sample.skip_reason is None
        assert sample.problem_type == spec.problem_type
        assert all(p.is_file() for p in [*sample.videos, *sample.images])
        prompt = render_prompt(spec, sample)
        assert sample.question in prompt
        if sample.options:
            assert "\n".join(["Options:", *sample.options]) in prompt  # one option per line
        gold = sample.answer
        final = SOLUTIONS[json.loads(gold)["entry_point"]] if spec.problem_type == "code" else gold
        result = reward(f"<think>I looked.</think><answer>{final}</answer>", gold, sample.options)
        assert (result.status, result.accuracy, result.overall) == ("ok", 1.0, 1.0), (
            sample.sample_id,
            result.details,
        )
        answers.append(final)
    # someone else's answer is not good enough (the check can fail)
    for sample, other in zip(samples, answers[1:] + answers[:1], strict=True):
        if other != sample.answer and spec.problem_type != "code":
            result = reward(f"<answer>{other}</answer>", sample.answer, sample.options)
            assert result.accuracy < 1.0, (sample.sample_id, other)
