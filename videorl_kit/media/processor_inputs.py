"""Hand decoded or cached frames to Hugging Face video processors with correct timing.

Qwen3-VL writes a ``<t seconds>`` marker before every temporal patch, computed as
``frames_indices / fps`` from the ``video_metadata`` it is given. Frames passed without
metadata get ``range(T)`` indices or a 24 fps default: wrong timestamps.
:func:`video_metadata_dict` builds that metadata from what the cache stores; pass it with
``do_sample_frames=False`` and ``do_resize=False`` so the processor neither re-samples nor
re-sizes the frames.

For constant-frame-rate video ``frames_indices`` are the source frame indices. For variable
frame rate they are the chosen frames' presentation times expressed on the average-fps grid
(``round(timestamp * fps)``), so ``index / fps`` lands within half a frame interval of when
each frame was really shown, instead of drifting as raw indices would.

Example:
    >>> meta = video_metadata_dict(
    ...     {"frame_indices": [0, 17, 33], "timestamps_s": [0.0, 17 / 30, 1.1],
    ...      "source_fps": 30.0, "source_frames": 150, "duration_s": 5.0,
    ...      "height": 252, "width": 308, "decoder": "pyav"})
    >>> meta["frames_indices"], meta["fps"], meta["total_num_frames"], meta["video_backend"]
    ([0, 17, 33], 30.0, 150, 'pyav')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["chat_inputs", "metadata_frame_indices", "processor_outputs", "video_metadata_dict"]

_FIELDS = (
    "frame_indices",
    "timestamps_s",
    "source_fps",
    "source_frames",
    "duration_s",
    "height",
    "width",
    "decoder",
)


def _get(decoded: Any, name: str) -> Any:
    if isinstance(decoded, Mapping):
        if name not in decoded:
            raise KeyError(f"decoded video is missing {name!r} (needs {', '.join(_FIELDS)})")
        return decoded[name]
    if not hasattr(decoded, name):
        raise KeyError(f"decoded video is missing {name!r} (needs {', '.join(_FIELDS)})")
    return getattr(decoded, name)


def metadata_frame_indices(
    frame_indices: list[int], timestamps_s: list[float], source_fps: float
) -> list[int]:
    """Return the indices whose ``index / fps`` reproduces each frame's real timestamp.

    Equal to ``frame_indices`` for constant frame rate; for variable frame rate, each
    timestamp rounded onto the ``source_fps`` grid.

    Example:
        >>> metadata_frame_indices([0, 10, 40], [0.0, 1.0, 2.0], 20.0)  # 10 fps, then 30
        [0, 20, 40]
        >>> metadata_frame_indices([0, 15, 29], [0.0, 0.5, 29 / 30], 30.0)
        [0, 15, 29]
    """
    if len(frame_indices) != len(timestamps_s):
        raise ValueError(f"{len(frame_indices)} frame indices but {len(timestamps_s)} timestamps")
    return [round(t * source_fps) for t in timestamps_s]


def video_metadata_dict(decoded: Any) -> dict[str, Any]:
    """Return a ``transformers.video_utils.VideoMetadata``-compatible dict for the frames.

    ``decoded`` is a :class:`~videorl_kit.media.decoded.DecodedVideo`, a cache row object
    (e.g. from ``FrameStore.get``) or a mapping with ``frame_indices, timestamps_s,
    source_fps, source_frames, duration_s, height, width`` and ``decoder``. Keys:
    ``total_num_frames, fps, width, height, duration, video_backend, frames_indices`` (``fps``
    is the *source* frame rate, as transformers expects).

    Example:
        >>> from transformers.video_utils import VideoMetadata  # doctest: +SKIP
        >>> VideoMetadata(**video_metadata_dict(video)).timestamps  # doctest: +SKIP
        [0.0, 0.5666666666666667, 1.1, ...]
    """
    fps = float(_get(decoded, "source_fps"))
    if not fps > 0:
        raise ValueError(f"source_fps must be positive to time frames, got {fps}")
    indices = [int(i) for i in _get(decoded, "frame_indices")]
    timestamps = [float(t) for t in _get(decoded, "timestamps_s")]
    return {
        "total_num_frames": int(_get(decoded, "source_frames")),
        "fps": fps,
        "width": int(_get(decoded, "width")),
        "height": int(_get(decoded, "height")),
        "duration": float(_get(decoded, "duration_s")),
        "video_backend": str(_get(decoded, "decoder")),
        "frames_indices": metadata_frame_indices(indices, timestamps, fps),
    }


def processor_outputs(
    processor: Any,
    text: str | Sequence[str],
    videos: Sequence[Any],
    video_metadata: Sequence[dict[str, Any]],
    images: Sequence[Any],
) -> Any:
    """Run an HF Qwen-VL processor on cached media: the prompt ``text`` (chat template
    applied; a list of texts is a batch, padded on the tokenizer's side) with its videos
    (uint8 T×H×W×3, metadata from
    :meth:`~videorl_kit.store.reader.CachedFrames.video_metadata` or
    :func:`video_metadata_dict`) and images (H×W×3), in placeholder order.

    The cache already sampled and resized the frames, so the processor runs with
    ``do_sample_frames=False`` and ``do_resize=False``; the metadata gives Qwen2.5-VL its
    ``second_per_grid_ts`` and Qwen3-VL its ``<t seconds>`` markers. Returns the processor's
    batch (``input_ids``, ``pixel_values_videos``, ``video_grid_thw``, ...). The dataset
    items, OpenRLHF's native-video agent and the evaluator all call this function.

    Example:
        >>> out = processor_outputs(processor, text, [frames], [meta], [])  # doctest: +SKIP
        >>> out["video_grid_thw"].tolist()                                   # doctest: +SKIP
        [[4, 8, 10]]
    """
    from transformers.video_utils import VideoMetadata

    texts = [text] if isinstance(text, str) else list(text)
    kwargs: dict[str, Any] = {
        "text": texts, "padding": True, "return_tensors": "pt", "do_resize": False
    }  # fmt: skip
    if videos:
        kwargs["videos"] = [frames.copy() for frames in videos]
        kwargs["video_metadata"] = [VideoMetadata(**meta) for meta in video_metadata]
        kwargs["do_sample_frames"] = False
        if hasattr(getattr(processor, "video_processor", None), "cap_pixels_per_frame"):
            kwargs["cap_pixels_per_frame"] = True  # moot (do_resize=False); silences a warning
    if images:
        kwargs["images"] = [image.copy() for image in images]
    return processor(**kwargs)


def chat_inputs(
    processor: Any,
    conversations: Sequence[list[dict[str, Any]]],
    videos: Sequence[Any],
    video_metadata: Sequence[dict[str, Any]],
    images: Sequence[Any],
) -> Any:
    """The model inputs of chat prompts on cached media: each conversation through the
    processor's chat template (generation prompt added), then :func:`processor_outputs` on
    the batch (videos and images of all conversations, in placeholder order).

    The one way the kit turns a prompt into model inputs: the evaluator's transformers backend
    and the TRL backend's native-video training call it, so both give a model the same ids
    and tensors for the same cached sample.

    Example:
        >>> from videorl_kit.media.chat import video_messages
        >>> messages = video_messages("How many?", None, n_videos=1, n_images=0)
        >>> inputs = chat_inputs(processor, [messages], [frames], [meta], [])  # doctest: +SKIP
        >>> sorted(inputs)                                                     # doctest: +SKIP
        ['attention_mask', 'input_ids', 'mm_token_type_ids', 'pixel_values_videos', ...]
    """
    texts = [
        processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        for messages in conversations
    ]
    return processor_outputs(processor, texts, videos, video_metadata, images)
