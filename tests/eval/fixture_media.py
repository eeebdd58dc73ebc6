"""The tiny media of the benchmark fixtures in task_specs/eval/fixtures/ (committed files).

Every fixture row names its video (and image) by the path the real benchmark uses; each of
those paths holds a 2-second, 64x48 synthetic clip (a coloured square crossing a grey
background, colours seeded by the path) written with the kit's reproducible encoder.
``python -m tests.eval.fixture_media`` writes the ones that are missing (after a new
fixture row); the tests only check that they exist and decode.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from videorl_kit.spec import load_spec
from videorl_kit.spec.data import Sample, iter_samples
from videorl_kit.spec.loader import discover_spec_paths
from videorl_kit.spec.models import TaskSpec

ROOT = Path(__file__).resolve().parents[2]
EVAL_SPECS = [Path(p) for p in discover_spec_paths([ROOT / "task_specs" / "eval"])]


def fixture_spec(spec: TaskSpec) -> TaskSpec:
    """``spec`` reading its shipped fixture instead of the real annotations."""
    assert spec.eval is not None and spec.eval.fixture is not None, spec.id
    fixture = spec.eval.fixture
    data = spec.data.model_copy(
        update={"path": fixture.path, "hub": None, "media_root": fixture.media_root}
    )
    copy = spec.model_copy(update={"data": data})
    copy._source_file = spec.source_file
    return copy


def fixture_samples(path: Path) -> list[Sample]:
    """The samples of the fixture of the spec at ``path``."""
    return list(iter_samples(fixture_spec(load_spec(path))))


def _frames(seed: int, n: int = 8, height: int = 48, width: int = 64) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    colour = rng.integers(40, 255, size=3, dtype=np.uint8)
    frames = []
    for i in range(n):
        frame = np.full((height, width, 3), 96, np.uint8)
        x = 4 + i * (width - 20) // max(1, n - 1)
        frame[16:32, x : x + 16] = colour
        frames.append(frame)
    return frames


def write_missing_media() -> list[Path]:
    """Write every fixture video and image that does not exist yet; return what was written."""
    from PIL import Image

    from videorl_kit.synth.encode import write_mp4

    written = []
    for path in EVAL_SPECS:
        for sample in fixture_samples(path):
            for media in [*sample.videos, *sample.images]:
                if media.exists():
                    continue
                media.parent.mkdir(parents=True, exist_ok=True)
                seed = int(hashlib.sha256(media.name.encode()).hexdigest()[:8], 16)
                if media in sample.images:
                    Image.fromarray(_frames(seed, n=1)[0]).save(media)
                else:
                    write_mp4(media, _frames(seed), fps=4)
                written.append(media)
    return written


if __name__ == "__main__":
    for item in write_missing_media():
        print(item.relative_to(ROOT))
