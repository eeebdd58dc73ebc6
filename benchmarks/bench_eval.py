"""Benchmark the evaluator's two speed-ups (not a test; prints ratios measured side by side).

(a) per-sample model-input preparation from the cache (``StoreMedia.load`` + the processor)
    over decoding the video again for every request (``decode_video`` under the same budget +
    the processor), as an evaluator without a cache does                 target >= 3x
(b) generation throughput of batched requests (``--batch-size 8``) over one request at a time,
    same requests, greedy, the tiny Qwen2.5-VL model on CPU               no target: on two
    CPU cores the vision tower is compute-bound, so batching gains little; the gain that
    matters is on a GPU, not measured here

Timings take the median over repetitions, interleaving both sides so background load hits
both alike. Videos: synthetic 640x360 clips of a moving noise texture (incompressible),
``--seconds`` long at 30 fps; budget fps 2, 4-32 frames, up to 200,704 pixels, patch 28.

Usage:
    python benchmarks/bench_eval.py                 # 6 clips of 20 s, 5 repeats
    python benchmarks/bench_eval.py --quick         # 3 clips of 8 s, 3 repeats
    python benchmarks/bench_eval.py --json out.json
    python benchmarks/bench_eval.py --clips 1 --seconds 2 --repeats 1   # smoke run
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import av
import numpy as np

BUDGET = {"fps": 2.0, "min_frames": 4, "max_frames": 32, "min_pixels": 3136,
          "max_pixels": 200704, "patch": 28}  # fmt: skip


def make_clip(path: Path, seconds: float, seed: int) -> None:
    """A 640x360 H.264 clip of a noise texture moving one pixel per frame."""
    rng = np.random.default_rng(seed)
    texture = rng.integers(0, 256, size=(360, 640 + int(seconds * 30) + 1, 3), dtype=np.uint8)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=30)
        stream.width, stream.height, stream.pix_fmt = 640, 360, "yuv420p"
        stream.options = {"preset": "ultrafast"}
        for i in range(int(seconds * 30)):
            frame = av.VideoFrame.from_ndarray(texture[:, i : i + 640], format="rgb24")
            container.mux(stream.encode(frame))
        container.mux(stream.encode())


def write_spec(folder: Path, clips: list[Path]) -> Path:
    rows = [
        {"id": f"s{i}", "problem": "Which way does the texture move?", "answer": "B",
         "options": ["A. left", "B. right"], "videos": [clip.name]}
        for i, clip in enumerate(clips)
    ]  # fmt: skip
    (folder / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = folder / "bench.yaml"
    spec.write_text(
        "id: bench-eval\nversion: 1\nproblem_type: multiple_choice\n"
        "data: {path: rows.jsonl, media_root: .}\n"
        f"budget: {{video: {json.dumps(BUDGET)}}}\n"
        "prompt: {template: '{{ question }}'}\n"
        "eval: {generation: {max_new_tokens: 16}}\n"
    )
    return spec


def median_time(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 clips of 8 s, 3 repeats")
    parser.add_argument("--clips", type=int, help="number of clips (overrides the preset)")
    parser.add_argument("--seconds", type=float, help="clip length (overrides the preset)")
    parser.add_argument("--repeats", type=int, help="repetitions (overrides the preset)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    n_clips, seconds, repeats = (3, 8.0, 3) if args.quick else (6, 20.0, 5)
    n_clips, seconds, repeats = (
        args.clips or n_clips,
        args.seconds or seconds,
        args.repeats or repeats,
    )

    from videorl_kit.eval.backends.transformers_backend import TransformersBackend
    from videorl_kit.eval.requests import GenerationRequest, StoreMedia, VideoInput
    from videorl_kit.eval.tasks import load_tasks
    from videorl_kit.media.decode import decode_video
    from videorl_kit.media.processor_inputs import video_metadata_dict
    from videorl_kit.spec.prompt import render_prompt
    from videorl_kit.store import build_cache
    from videorl_kit.train.tiny_model import build_tiny_model

    work = Path(tempfile.mkdtemp(prefix="bench_eval_"))
    clips = [work / f"clip{i}.mp4" for i in range(n_clips)]
    for i, clip in enumerate(clips):
        make_clip(clip, seconds, seed=i)
    (task,) = load_tasks([write_spec(work, clips)])
    build_cache([task.spec], work / "store", workers=2)
    media = StoreMedia(work / "store")
    rows = media.sample_rows([task.id])
    backend = TransformersBackend(build_tiny_model(work / "model", "qwen2.5-vl").path)
    _ = backend.processor  # load the model before timing

    def request(sample, videos) -> GenerationRequest:
        return GenerationRequest(
            task.id, sample.sample_id, render_prompt(task.spec, sample), None,
            "multiple_choice", sample.options, task.section.generation, 0, videos=videos,
        )  # fmt: skip

    def from_cache() -> None:
        for sample in task.samples:
            videos, _ = media.load(rows[(task.id, sample.sample_id)])
            backend.model_inputs([request(sample, videos)])

    def from_video() -> None:
        for sample in task.samples:
            decoded = decode_video(sample.videos[0], BUDGET)
            metadata = video_metadata_dict(decoded)
            video = VideoInput(decoded.frames, metadata, "", tuple(decoded.timestamps_s))
            backend.model_inputs([request(sample, (video,))])

    cached, decoded = [], []
    for _ in range(repeats):
        cached.append(median_time(from_cache, 1))
        decoded.append(median_time(from_video, 1))
    ratio_a = statistics.median(decoded) / statistics.median(cached)

    requests = []
    for sample in task.samples:
        videos, _ = media.load(rows[(task.id, sample.sample_id)])
        requests.append(request(sample, videos))
    requests = (requests * (8 // len(requests) + 1))[:8]
    batched, single = [], []
    for _ in range(repeats):
        batched.append(median_time(lambda: backend.generate(requests), 1))
        single.append(median_time(lambda: [backend.generate([r]) for r in requests], 1))
    ratio_b = statistics.median(single) / statistics.median(batched)

    figures = {
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "clips": n_clips,
        "clip_seconds": seconds,
        "repeats": repeats,
        "a_cached_s_per_sample": statistics.median(cached) / n_clips,
        "a_decoded_s_per_sample": statistics.median(decoded) / n_clips,
        "a_ratio": ratio_a,
        "b_batched_samples_per_s": len(requests) / statistics.median(batched),
        "b_single_samples_per_s": len(requests) / statistics.median(single),
        "b_ratio": ratio_b,
    }
    print(f"(a) inputs from the cache vs decoding per request: {ratio_a:.1f}x (target >= 3x); "
          f"{figures['a_cached_s_per_sample'] * 1000:.0f} ms vs "
          f"{figures['a_decoded_s_per_sample'] * 1000:.0f} ms per sample")  # fmt: skip
    print(f"(b) batched (8) vs one at a time: {ratio_b:.1f}x (no target on CPU); "
          f"{figures['b_batched_samples_per_s']:.1f} vs {figures['b_single_samples_per_s']:.1f} "
          "samples/s")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
