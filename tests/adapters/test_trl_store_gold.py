"""The TRL dataset (``grpo_dataset``) takes the gold and the frames the spec names, never an
edited copy in the store: an edited answer or swapped media keys are refused at once."""

from __future__ import annotations

import shutil
from pathlib import Path

import lance
import numpy as np
import pytest

from videorl_kit.adapters.trl.dataset import grpo_dataset
from videorl_kit.spec import load_spec
from videorl_kit.spec.data import iter_samples
from videorl_kit.store import StoreMismatchError, build_cache
from videorl_kit.synth import write_demo_task


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo task (two clips, two stills) and its built store."""
    folder = tmp_path_factory.mktemp("trl-gold")
    spec_file = Path(write_demo_task(folder))
    build_cache([load_spec(spec_file)], folder / "store", workers=1)
    return spec_file, folder / "store"


def _samples(store: Path) -> lance.LanceDataset:
    return lance.dataset(str(store / "samples.lance"))


def _copy(store: Path, tmp_path: Path) -> Path:
    target = tmp_path / "store"
    shutil.copytree(store, target)
    return target


def test_trl_rows_carry_the_specs_gold(demo: tuple[Path, Path]) -> None:
    spec_file, store = demo
    gold = {s.sample_id: s.answer for s in iter_samples(load_spec(spec_file))}
    dataset = grpo_dataset([spec_file], store)
    rows = [dataset[i] for i in range(len(dataset))]
    assert rows and {r["sample_id"]: r["answer"] for r in rows} == gold


def test_trl_dataset_refuses_an_edited_gold(demo: tuple[Path, Path], tmp_path: Path) -> None:
    spec_file, store = demo
    copy = _copy(store, tmp_path)
    first = sorted(_samples(copy).to_table(columns=["sample_id"]).column(0).to_pylist())[0]
    _samples(copy).update({"answer": "'1000'"}, where=f"sample_id = '{first}'")
    with pytest.raises(StoreMismatchError) as caught:
        grpo_dataset([spec_file], copy)
    message = str(caught.value)
    assert f"(id '{first}'): the store's answer '1000' differs" in message, message
    assert f"build-cache {spec_file} --store {copy}" in message


def test_trl_dataset_refuses_swapped_videos(demo: tuple[Path, Path], tmp_path: Path) -> None:
    spec_file, store = demo
    copy = _copy(store, tmp_path)
    rows = _samples(copy).to_table(columns=["sample_id", "video_keys"]).to_pylist()
    a, b = sorted((r for r in rows if r["video_keys"]), key=lambda r: r["sample_id"])[:2]
    assert not np.array_equal(a["video_keys"], b["video_keys"])
    for row, other in ((a, b), (b, a)):
        _samples(copy).update({"video_keys": f"['{other['video_keys'][0]}']"},
                              where=f"sample_id = '{row['sample_id']}'")  # fmt: skip
    with pytest.raises(StoreMismatchError, match="another file's frames"):
        grpo_dataset([spec_file], copy)
