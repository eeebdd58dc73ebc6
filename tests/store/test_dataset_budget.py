"""CachedSampleDataset checks the trainer's budget (from its task spec) against the store, the
same way and with the same message as ``FrameStore.open(budget=...)``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.store.spec_files import VIDEO_BUDGET, video_rows, write_spec
from videorl_kit.spec import load_spec
from videorl_kit.spec.models import BudgetSpec, ImageBudget, VideoBudget
from videorl_kit.store import CachedSampleDataset, FrameStore, StoreMismatchError, build_cache
from videorl_kit.store.schema import budget_hash

OTHER_VIDEO_BUDGET = {**VIDEO_BUDGET, "fps": 1.0}


def test_the_spec_the_store_was_built_with_is_accepted(built_store: Path) -> None:
    spec = load_spec(built_store.parent / "built-task.yaml")
    dataset = CachedSampleDataset(built_store, spec=spec)
    assert len(dataset) == 4  # the spec selects its own task
    assert dataset.budget_hashes == {
        "video": budget_hash("video", VideoBudget(**VIDEO_BUDGET).model_dump(mode="json")),
        "image": budget_hash("image", ImageBudget().model_dump(mode="json")),
    }
    video_item = next(dataset[i] for i in range(len(dataset)) if dataset[i]["videos"])
    assert video_item["videos"][0].shape[0] >= 4
    # a plain budget (no spec) is accepted too
    assert len(CachedSampleDataset(built_store, budget=spec.budget)) == 4


def test_a_store_without_the_expected_budget_is_refused_like_frame_store_open(
    built_store: Path,
) -> None:
    expected = BudgetSpec(video=VideoBudget(**OTHER_VIDEO_BUDGET))
    with pytest.raises(StoreMismatchError) as refused:
        CachedSampleDataset(built_store, budget=expected)
    with pytest.raises(StoreMismatchError) as by_open:
        FrameStore.open(built_store, budget=expected.video)
    message = str(refused.value)
    assert message == str(by_open.value)  # one check, one message
    assert message.startswith(f"{built_store}: no frames for the expected video budget ")
    assert '"fps": 1.0' in message and "the store holds budgets" in message
    assert f"`videorl-kit build-cache SPEC... --store {built_store}`" in message


def test_a_spec_with_another_budget_is_refused(built_store: Path, tmp_path: Path) -> None:
    rows = video_rows(["a.mp4"])  # same task id, other video budget
    spec = load_spec(write_spec(tmp_path, "built-task", rows, video_budget=OTHER_VIDEO_BUDGET))
    with pytest.raises(StoreMismatchError, match="no frames for the expected video budget"):
        CachedSampleDataset(built_store, spec=spec)


def test_rows_cached_under_another_budget_of_the_same_store_are_refused(
    spec_dir: Path, tmp_path: Path
) -> None:
    rows = video_rows(["a.mp4", "c.mp4"])
    first = write_spec(spec_dir, "task-first", rows)
    second = write_spec(spec_dir, "task-second", rows, video_budget=OTHER_VIDEO_BUDGET)
    store = tmp_path / "store"
    build_cache([first, second], store, workers=2)

    assert len(CachedSampleDataset(store, spec=load_spec(first))) == 2
    assert len(CachedSampleDataset(store, spec=load_spec(second))) == 2
    # the store holds the second budget, but task-first's rows were not cached under it
    other = load_spec(second).budget
    with pytest.raises(StoreMismatchError) as err:
        CachedSampleDataset(store, task_ids=["task-first"], budget=other)
    message = str(err.value)
    assert "samples were cached under another video budget" in message
    assert "task task-first with " in message and "task-second" not in message
    assert f"`videorl-kit build-cache SPEC... --store {store}`" in message
    # every task at once cannot match one budget
    with pytest.raises(StoreMismatchError, match="task task-second with "):
        CachedSampleDataset(store, budget=load_spec(first).budget)
