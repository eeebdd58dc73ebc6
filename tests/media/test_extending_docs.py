"""docs/extending.md's worked example runs as written: a decoder added as one module."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import videorl_kit.media.decoders as decoders
from tests.media_kit import make_video, read_index
from videorl_kit.media.decode import decode_video
from videorl_kit.store import BuildConfig
from videorl_kit.store.identify import decoder_identity

REPO = Path(__file__).resolve().parents[2]
BUDGET = {"fps": 2.0, "min_frames": 4, "max_frames": 16, "min_pixels": 3136,
          "max_pixels": 50176, "patch": 28}  # fmt: skip


@pytest.fixture
def example_decoder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The doc's module, saved where the decoders package finds it (an extra package path)."""
    text = (REPO / "docs" / "extending.md").read_text(encoding="utf-8")
    match = re.search(r"Save it as\s+`videorl_kit/media/decoders/(\w+)\.py`:\s+```python\n(.*?)```",
                      text, re.S)  # fmt: skip
    assert match, "docs/extending.md lost its worked example"
    name, source = match.groups()
    folder = tmp_path / "more_decoders"
    folder.mkdir()
    (folder / f"{name}.py").write_text(source, encoding="utf-8")
    monkeypatch.setattr(decoders, "__path__", [*decoders.__path__, str(folder)])
    monkeypatch.delitem(sys.modules, f"{decoders.__name__}.{name}", raising=False)
    return name


def test_the_worked_example_is_a_decoder_by_its_module_alone(
    example_decoder: str, tmp_path: Path
) -> None:
    assert example_decoder in decoders.decoder_names()
    assert BuildConfig(decoder=example_decoder).decoder == example_decoder
    name, version = decoder_identity("video", example_decoder)
    assert name == example_decoder and "every frame in order" in version

    made = make_video(tmp_path / "cfr.mp4", 90, 30, (128, 96))
    theirs = decode_video(made.path, BUDGET, decoder=example_decoder)
    ours = decode_video(made.path, BUDGET)
    assert theirs.decoder == example_decoder and theirs.decoder_version == version
    assert theirs.frame_indices == ours.frame_indices
    assert [read_index(f) for f in theirs.frames] == theirs.frame_indices
    assert theirs.timestamps_s == pytest.approx(ours.timestamps_s)
    np.testing.assert_array_equal(theirs.frames, ours.frames)
