"""Prompt rows in OpenRLHF's layout, one JSONL file per task, with their media exported.

A row is ``{"prompt": [chat messages], "images": [media paths], "label": JSON text,
"datasource": task id, "sample_id": ...}``, read with ``--data.input_key prompt
--data.label_key label --data.image_key images --data.apply_chat_template``. Every message's
``content`` is a list of typed parts (even the system message's), so HF ``datasets`` infers
one schema for every task and ``--data.prompt_probs`` can interleave the files.

The two video paths differ only in the user message and the media files:

* ``frames_as_images``: every cached frame becomes an image part after its timestamp, the
  layout TRL trains on too (:func:`~videorl_kit.media.chat.frame_messages`), and a PNG
  file;
* ``native``: every video stays one video part
  (:func:`~videorl_kit.media.chat.video_messages`), exported as
  ``.npy`` plus metadata for the bundle's agent (:mod:`.video_agent`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from videorl_kit.adapters.openrlhf.labels import encode_label
from videorl_kit.adapters.openrlhf.media import write_png_frames, write_video
from videorl_kit.media.chat import frame_messages, timestamp_text, video_messages
from videorl_kit.store.row_digest import checked_cache_key
from videorl_kit.store.torch_dataset import CachedSampleDataset

VIDEO_PATHS = ("frames_as_images", "native")
"""How videos reach OpenRLHF: a recipe's ``openrlhf.video``."""


@dataclass
class TaskPrompts:
    """What exporting one task's prompts wrote."""

    task_id: str
    file: Path
    n_prompts: int = 0
    max_images: int = 0
    max_videos: int = 0
    max_prompt_tokens: int = 0


def prompt_token_bound(processor: Any, messages: list[dict[str, Any]], videos: list[Any],
                       n_image_tokens: list[int], video_path: str) -> int:  # fmt: skip
    """An upper bound of the prompt's length in tokens once the processor expands its media.

    The chat-templated text is tokenized (one placeholder per media item); each image's
    placeholder then becomes its cached visual tokens, and each native video's becomes, per
    temporal patch, its visual tokens plus a timestamp marker and two vision delimiters (what
    Qwen3-VL writes; Qwen2.5-VL writes fewer).
    """
    text = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    tokenizer = getattr(processor, "tokenizer", processor)
    total = len(tokenizer(text, add_special_tokens=False)["input_ids"])
    total += sum(tokens - 1 for tokens in n_image_tokens)
    if video_path == "native":
        for video in videos:
            groups = -(-video.n_frames // video.temporal_patch)
            marker = len(tokenizer(timestamp_text(max(video.timestamps_s, default=0.0)),
                                   add_special_tokens=False)["input_ids"])  # fmt: skip
            total += video.visual_tokens - 1 + groups * (marker + 2)
    return total


class _ImageTokens:
    """Tokens the processor's own image path gives a frame (its resize rules), per shape."""

    def __init__(self, processor: Any) -> None:
        self.image_processor = processor.image_processor
        self.merge = int(getattr(self.image_processor, "merge_size", 2))
        self.known: dict[tuple[int, ...], int] = {}

    def tokens(self, frame: Any) -> int:
        shape = tuple(frame.shape)
        if shape not in self.known:
            grid = self.image_processor(images=[frame.copy()], return_tensors="pt")[
                "image_grid_thw"
            ]
            self.known[shape] = int(grid.prod()) // self.merge**2
        return self.known[shape]


def _write_media(item: Any, bundle: Path, video_path: str) -> list[str]:
    """Export one cached video or image once; the paths a row lists for it."""
    name = checked_cache_key(item.cache_key)  # file names come from keys: never a path
    if video_path == "native" and item.modality == "video":
        path = bundle / "media" / f"{name}.npy"
        if not path.exists():
            meta = item.video_metadata()
            write_video(path.parent, name, item.frames, meta, item.timestamps_s)
        return [str(path)]
    frames = item.frames if item.modality == "video" else item.frames[:1]
    folder = bundle / "frames" / name
    paths = [folder / f"{index}.png" for index in range(len(frames))]
    if not all(path.exists() for path in paths):
        paths = write_png_frames(folder, frames)
    return [str(path) for path in paths]


def export_task_prompts(
    spec: Any, store: Path, bundle: Path, video_path: str, processor: Any
) -> TaskPrompts:
    """Write ``bundle/data/train.<task>.jsonl`` and the media of every ready sample of ``spec``.

    Media go to ``bundle/frames/<cache_key>/`` (PNG frames and images) or
    ``bundle/media/<cache_key>.npy`` (native videos); an item shared by several samples or
    tasks is written once. ``processor`` (the model's) sizes the prompts. Raises
    ``StoreMismatchError`` (a ``UserError``) when the store holds no ready sample of the task
    or holds it under another budget.
    """
    if video_path not in VIDEO_PATHS:
        raise ValueError(f"unknown video path {video_path!r} (valid: {', '.join(VIDEO_PATHS)})")
    dataset = CachedSampleDataset(store, spec=spec)
    out = TaskPrompts(spec.id, bundle / "data" / f"train.{spec.id}.jsonl")
    out.file.parent.mkdir(parents=True, exist_ok=True)
    native = video_path == "native"
    sizes = _ImageTokens(processor)
    with out.file.open("w", encoding="utf-8") as handle:
        for row in dataset.rows:
            videos = dataset.frames.get_many(row["video_keys"])
            images = dataset.frames.get_many(row["image_keys"])
            refs = [
                ref for item in [*videos, *images] for ref in _write_media(item, bundle, video_path)
            ]
            prompt, system = row["prompt"], row["system_prompt"]
            if native:
                messages = video_messages(prompt, system, len(videos), len(images))
                image_tokens = [image.visual_tokens for image in images]
            else:  # OpenRLHF's own image path resizes with the processor's settings
                stills = [image.frames[0] for image in images]
                messages, frames = frame_messages(prompt, system, videos, stills)
                image_tokens = [sizes.tokens(frame) for frame in frames]
            tokens = prompt_token_bound(processor, messages, videos, image_tokens, video_path)
            label = encode_label(row["task_id"], row["sample_id"], row["problem_type"],
                                 row["answer"], row["options"])  # fmt: skip
            record = {"prompt": messages, "images": refs, "label": label,
                      "datasource": row["task_id"], "sample_id": row["sample_id"]}  # fmt: skip
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            out.n_prompts += 1
            out.max_images = max(out.max_images, len(refs) - (len(videos) if native else 0))
            out.max_videos = max(out.max_videos, len(videos) if native else 0)
            out.max_prompt_tokens = max(out.max_prompt_tokens, tokens)
    return out
