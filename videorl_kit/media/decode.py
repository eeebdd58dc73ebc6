"""Decode videos and images into uint8 frames ready for a Qwen-VL model: the entry points.

``decode_video(path, budget, decoder="pyav")`` samples and resizes a video's frames with a
decoder found by name in :mod:`videorl_kit.media.decoders` (PyAV by default, whose
decisions :mod:`videorl_kit.media.decoders.pyav` lists; decord and torchcodec optional);
``decode_image`` loads an image with Pillow. Both return the results of
:mod:`videorl_kit.media.decoded`.

* **Resize.** Pillow's antialiased bicubic filter on float planes (no torch). Sizes equal
  qwen-vl-utils'; pixel values are within 1 level of its torchvision resize (see
  :mod:`videorl_kit.media.resize`). Frames are resized one at a time as they are decoded, so
  a 4000x3000 source never needs more than one full-size frame in memory.

Example:
    >>> import tempfile, numpy as np
    >>> from videorl_kit.synth.encode import write_mp4
    >>> clip = tempfile.mkdtemp() + "/clip.mp4"
    >>> write_mp4(clip, [np.full((96, 128, 3), 20 * i, np.uint8) for i in range(10)], fps=5)
    >>> budget = {"fps": 2.0, "min_frames": 4, "max_frames": 32, "min_pixels": 3136,
    ...           "max_pixels": 50176, "patch": 28}
    >>> video = decode_video(clip, budget)
    >>> video.frames.shape, video.frame_indices, video.timestamps_s
    ((4, 84, 140, 3), [0, 3, 6, 9], [0.0, 0.6, 1.2, 1.8])
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import PIL
from PIL import Image, ImageOps

from videorl_kit.core.budget import ImageBudget, as_image_budget, as_video_budget
from videorl_kit.media.budget import budget_image_size
from videorl_kit.media.container import ThreadType, check_media_file
from videorl_kit.media.decoded import SAMPLER_VERSION, DecodedImage, DecodedVideo
from videorl_kit.media.decoders import DEFAULT_DECODER, DecodeOptions, decoder_names, get_decoder
from videorl_kit.media.errors import BudgetTooSmallError, NotAnImageError
from videorl_kit.media.hashing import file_content_hash
from videorl_kit.media.probe import VideoInfo, probe_video

__all__ = [
    "SAMPLER_VERSION",
    "DecodedImage",
    "DecodedVideo",
    "VideoInfo",
    "decode_image",
    "decode_video",
    "decoder_names",
    "decoder_version",
    "file_content_hash",
    "probe_video",
]

IMAGE_DECODER = "pillow"


def decoder_version(decoder: str = DEFAULT_DECODER) -> str:
    """Return the version string recorded with frames from ``decoder`` (library + codec).

    ``decoder`` is a video decoder's name or ``"pillow"`` (images). Raises
    :class:`~videorl_kit.media.errors.DecoderUnavailableError` for an unknown decoder or
    one whose library is missing.

    Example:
        >>> decoder_version().startswith("av "), decoder_version("pillow").startswith("pillow ")
        (True, True)
    """
    if decoder == IMAGE_DECODER:
        return f"pillow {PIL.__version__}"
    return get_decoder(decoder).version()


# --------------------------------------------------------------------------- video


def decode_video(
    path: str | os.PathLike[str],
    budget: Any,
    *,
    decoder: str = DEFAULT_DECODER,
    threads: int = 1,
    allow_truncated: bool = False,
    seek: bool = True,
    skip_nonreference: bool = True,
    thread_type: ThreadType | None = None,
) -> DecodedVideo:
    """Decode ``path`` with ``decoder``, sample frames and resize them by ``budget``.

    ``budget`` is a dict or any object with the ``VideoBudget`` attributes (``fps,
    min_frames, max_frames, min_pixels, max_pixels, total_pixels, patch, temporal_patch``).
    The options are :class:`~videorl_kit.media.decoders.DecodeOptions`: ``threads`` is the
    decoder thread count (0: FFmpeg decides) and ``thread_type`` how PyAV's decoder uses them
    (see :func:`~videorl_kit.media.container.video_container`; the frames are the same
    either way). ``skip_nonreference=False`` decodes every picture on the way to a target
    (same frames, slower; for checks).

    Raises:
        MissingFileError, EmptyFileError, NotAVideoError, NoVideoStreamError, NoFramesError,
        TruncatedVideoError, DecodeError: the file cannot be read (the class says why).
        BudgetTooSmallError: the budget cannot hold this video (e.g. aspect ratio > 200).
        DecoderUnavailableError: ``decoder`` is unknown or its library is not installed.
        ValueError: the budget itself is malformed.

    Example:
        >>> decode_video("clip.mp4", {}, decoder="opencv")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        videorl_kit.media.errors.DecoderUnavailableError: decoder 'opencv' is unknown; ...
    """
    chosen = get_decoder(decoder)
    options = DecodeOptions(threads, thread_type, allow_truncated, seek, skip_nonreference)
    return chosen.decode(Path(path), as_video_budget(budget), options)


# --------------------------------------------------------------------------- image


def _to_rgb(image: Image.Image) -> Image.Image:
    """RGB like qwen-vl-utils: transparent pixels become white, other modes convert."""
    if image.mode == "RGBA":
        background = Image.new("RGB", image.size, (255, 255, 255))
        background.paste(image, mask=image.split()[3])
        return background
    return image.convert("RGB")


def decode_image(path: str | os.PathLike[str], budget: Any) -> DecodedImage:
    """Load an image, apply its EXIF orientation, convert to RGB and resize by ``budget``.

    ``budget`` is a dict or object with ``min_pixels, max_pixels, patch``. The size comes
    from ``smart_resize``; the resize is Pillow bicubic, as in qwen-vl-utils'
    ``fetch_image``, so pixels are identical to it for images without EXIF rotation
    (qwen-vl-utils ignores EXIF orientation; transformers' ``load_image`` applies it, as we
    do). Animated images use their first frame.

    Raises:
        MissingFileError, EmptyFileError: see :func:`~videorl_kit.media.container.
            check_media_file`.
        NotAnImageError: Pillow cannot identify or fully read the file.
        BudgetTooSmallError: the budget cannot hold this image (e.g. aspect ratio > 200).

    Example:
        >>> image = decode_image("photo.png", {"min_pixels": 3136, "max_pixels": 1003520,
        ...                                    "patch": 28})  # doctest: +SKIP
        >>> image.frames.shape  # doctest: +SKIP
        (1, 476, 644, 3)
    """
    params: ImageBudget = as_image_budget(budget)
    file = check_media_file(path)
    try:
        with Image.open(file) as opened:
            opened.load()
            image = _to_rgb(ImageOps.exif_transpose(opened))
    except (PIL.UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise NotAnImageError(file, f"not a readable image ({exc})") from None
    width, height = image.size
    try:
        out_h, out_w = budget_image_size(params, height, width)
    except ValueError as exc:
        raise BudgetTooSmallError(file, str(exc)) from None
    if (out_w, out_h) != (width, height):
        image = image.resize((out_w, out_h), Image.Resampling.BICUBIC)
    frames = np.asarray(image, dtype=np.uint8)[np.newaxis].copy()
    return DecodedImage(
        path=os.fspath(path),
        frames=frames,
        height=out_h,
        width=out_w,
        source_height=height,
        source_width=width,
        decoder=IMAGE_DECODER,
        decoder_version=decoder_version(IMAGE_DECODER),
    )
