"""decord (optional, ``pip install 'videorl-kit[video]'``): frames read by index.

Frame count and average fps come from decord, the frames from uniform indices, as
qwen-vl-utils reads them with decord; orientation and resize are the kit's
(:mod:`videorl_kit.media.indexed_decode`). decord ignores the display rotation; the
kit applies it, so rotated files come out upright.

Example:
    >>> from videorl_kit.media.decoders import get_decoder
    >>> get_decoder("decord").decode  # loads this module, not decord  # doctest: +ELLIPSIS
    <function decode at ...>
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

from videorl_kit.core.budget import VideoBudget
from videorl_kit.media.budget import sample_count
from videorl_kit.media.decoded import SAMPLER_VERSION, DecodedVideo
from videorl_kit.media.decoders import DecodeOptions, unavailable
from videorl_kit.media.errors import DecodeError
from videorl_kit.media.geometry import uniform_frame_indices
from videorl_kit.media.indexed_decode import IndexedFrames, decode_by_index

__all__ = ["decode", "version"]

INSTALL = "pip install 'videorl-kit[video]'"


def _library() -> Any:
    try:
        import decord
    except ImportError as exc:
        raise unavailable("decord", exc, INSTALL) from None
    return decord


def version() -> str:
    """decord's version and the sampler's (recorded with the frames)."""
    return f"decord {_library().__version__}; sampler {SAMPLER_VERSION}"


def _read(path: Path, params: VideoBudget, threads: int) -> IndexedFrames:
    decord = _library()
    try:
        reader = decord.VideoReader(str(path), num_threads=threads)
        total = len(reader)
        fps = reader.get_avg_fps()
        positions = uniform_frame_indices(total, sample_count(path, total, Fraction(fps), params))
        frames = reader.get_batch(positions).asnumpy()
        starts = reader.get_frame_timestamp(positions)[:, 0]
        first = float(reader.get_frame_timestamp(0)[0])
    except decord.DECORDError as exc:
        raise DecodeError(path, f"decord failed: {exc}") from None
    return IndexedFrames(frames, total, float(fps), positions, [float(t) - first for t in starts])


def decode(path: Path, params: VideoBudget, options: DecodeOptions) -> DecodedVideo:
    """Sample and resize ``path``'s frames with decord."""
    return decode_by_index(path, params, options, "decord", version(), _read)
