"""The transformers backend end to end: the tiny model evaluates synthetic benchmarks from
the cache, results validate, the same seed reproduces every sample, variants and the
trajectories table work, and cached timing metadata reaches the processor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.eval.conftest import cached_requests
from videorl_kit.eval.results import EvalResults, load_results
from videorl_kit.eval.runner import EvalConfig, run_eval
from videorl_kit.eval.tasks import load_tasks
from videorl_kit.store import read_trajectories

SPECS = ["synth-multiple-choice.yaml", "synth-temporal.yaml", "synth-image-count.yaml"]
#: Short sampled answers keep the CPU runs fast and make reproducibility non-trivial.
SAMPLING = ["eval.generation.max_new_tokens=6", "eval.generation.temperature=1.0"]


def _records(folder: Path, results: EvalResults) -> dict[str, list[dict]]:
    return {
        task_id: [json.loads(line) for line in (folder / task.samples_file).open()]
        for task_id, task in results.tasks.items()
    }


@pytest.fixture(scope="module")
def runs(synth_tree, tiny_model, tmp_path_factory) -> dict[str, tuple[Path, EvalResults]]:
    """Runs on one shared store: seed 0 twice (each into its own folder), seed 1 once."""
    root = tmp_path_factory.mktemp("runs")
    specs = [synth_tree / "task_specs" / name for name in SPECS]
    made = {}
    for name, seed in (("a", 0), ("b", 0), ("c", 1)):
        out = root / name
        made[name] = (
            out,
            run_eval(
                EvalConfig(
                    specs=specs,
                    out=out,
                    model=str(tiny_model),
                    store=root / "store",
                    seed=seed,
                    batch_size=2,
                    overrides=SAMPLING,
                    trajectories=name == "a",
                )
            ),
        )
    return made


def test_the_tiny_model_evaluates_synthetic_benchmarks_from_the_cache(runs):
    out, results = runs["a"]
    assert load_results(out) == results
    assert results.model.backend == "transformers" and results.model.name == "qwen2_5_vl"
    assert results.run.store is not None and results.run.versions["transformers"]
    for task_id, task in results.tasks.items():
        assert task.n_scored + task.n_unverifiable == task.n_rows == 2, task_id
        assert task.budget["video"]["patch"] == 28
    records = _records(out, results)
    video_record = records["synth-multiple-choice"][0]
    image_record = records["synth-image-count"][0]
    assert len(video_record["media"]) == 1 and len(image_record["media"]) == 1
    assert all(isinstance(r["response"], str) for rs in records.values() for r in rs)


def test_the_same_seed_gives_identical_samples_and_metrics(runs):
    (out_a, a), (out_b, b), (out_c, c) = runs["a"], runs["b"], runs["c"]
    assert _records(out_a, a) == _records(out_b, b)
    for task_id in a.tasks:
        assert a.tasks[task_id].metrics == b.tasks[task_id].metrics
        assert a.tasks[task_id].samples_sha256 == b.tasks[task_id].samples_sha256
    assert a.model.fingerprint == b.model.fingerprint
    responses = lambda out, r: [x["response"] for rs in _records(out, r).values() for x in rs]  # noqa: E731
    assert responses(out_a, a) != responses(out_c, c)  # another seed samples other tokens
    same_inputs = lambda out, r: [  # noqa: E731
        (x["doc_hash"], x["prompt_hash"], x["target_hash"])
        for rs in _records(out, r).values()
        for x in rs
    ]
    assert same_inputs(out_a, a) == same_inputs(out_c, c)


def test_trajectories_are_appended_once_and_read_back(runs, synth_tree, tiny_model):
    out, results = runs["a"]
    store = Path(results.run.store)
    source = f"eval:{results.run.run_id}"
    trajectories = read_trajectories(store, source=source)
    records = [r for rs in _records(out, results).values() for r in rs]
    assert len(trajectories) == len(records) == sum(t.n_rows for t in results.tasks.values())
    by_sample = {(t["task_id"], t["sample_id"]): t for t in trajectories}
    for record in records:  # each response and its reward, as the samples file has them
        kept = by_sample[(record["task_id"], record["sample_id"])]
        assert kept["response"] == record["response"]
        assert (kept["reward_overall"], kept["reward_status"]) == (
            record["overall"],
            record["status"],
        )
        assert kept["reward_details"] == record["details"]
    assert read_trajectories(store, source="eval:another-run") == []
    assert {t["task_id"] for t in read_trajectories(store, task_ids=["synth-temporal"])} == {
        "synth-temporal"
    }
    again = run_eval(
        EvalConfig(specs=[synth_tree / "task_specs" / s for s in SPECS], out=out,
                   model=str(tiny_model), store=store, batch_size=2, overrides=SAMPLING,
                   trajectories=True)
    )  # fmt: skip
    assert again.tasks == results.tasks
    assert len(read_trajectories(store)) == len(records)  # nothing added twice


def test_robustness_variants(synth_tree, tiny_model, tmp_path, runs):
    spec = synth_tree / "task_specs" / "synth-multiple-choice.yaml"
    store = Path(runs["a"][1].run.store)
    standard = _records(*runs["a"])["synth-multiple-choice"]
    by_variant = {}
    for variant in ("no_visual", "shuffled_frames", "random_choice"):
        out = tmp_path / variant
        results = run_eval(
            EvalConfig(specs=[spec], out=out, model=str(tiny_model), store=store,
                       variant=variant, overrides=SAMPLING)
        )  # fmt: skip
        assert results.tasks["synth-multiple-choice"].variant == variant
        by_variant[variant] = _records(out, results)["synth-multiple-choice"]
    assert all(r["media"] == [] for r in by_variant["no_visual"])
    assert [r["prompt_hash"] for r in by_variant["no_visual"]] != [
        r["prompt_hash"] for r in standard
    ]
    assert [r["media"] for r in by_variant["shuffled_frames"]] == [r["media"] for r in standard]
    reshuffled = run_eval(
        EvalConfig(specs=[spec], out=tmp_path / "reshuffled", model=str(tiny_model), store=store,
                   variant="shuffled_frames", seed=1, overrides=SAMPLING)
    )  # fmt: skip
    prompt_hashes = lambda records: [r["prompt_hash"] for r in records]  # noqa: E731
    other_order = _records(tmp_path / "reshuffled", reshuffled)["synth-multiple-choice"]
    assert prompt_hashes(other_order) != prompt_hashes(by_variant["shuffled_frames"])
    guesses = [r["response"] for r in by_variant["random_choice"]]
    letters = [o.split(".")[0] for o in standard[0]["options"]]
    assert all(g.removeprefix("<answer>").removesuffix("</answer>") in letters for g in guesses)
    again = run_eval(
        EvalConfig(specs=[spec], out=tmp_path / "again", variant="random_choice")
    )  # no model needed for chance
    assert [
        r["response"] for r in _records(tmp_path / "again", again)["synth-multiple-choice"]
    ] == guesses
    assert again.model.backend == "random_choice"


def test_qwen3_vl_gets_the_cached_timestamps(synth_tree, tmp_path):
    """Cached frames reach the processor with their metadata: Qwen3-VL's prompt carries the
    real times of the sampled frames, not frame numbers or a 24 fps default."""
    from videorl_kit.eval.backends.transformers_backend import TransformersBackend
    from videorl_kit.eval.requests import GenerationRequest, StoreMedia
    from videorl_kit.spec.prompt import render_prompt
    from videorl_kit.store import build_cache
    from videorl_kit.train.tiny_model import build_tiny_model

    model = build_tiny_model(tmp_path / "qwen3", "qwen3-vl").path
    spec_path = synth_tree / "task_specs" / "synth-temporal.yaml"
    (task,) = load_tasks([spec_path], overrides=["budget.video.patch=32"], limit=1)
    build_cache([task.spec], tmp_path / "store", workers=1)
    media = StoreMedia(tmp_path / "store")
    sample = task.samples[0]
    cached = media.sample_rows([task.id])[(task.id, sample.sample_id)]
    videos, _ = media.load(cached)
    request = GenerationRequest(
        task.id, sample.sample_id, render_prompt(task.spec, sample), None,
        sample.problem_type.value, None, task.section.generation, 0, videos=videos,
    )  # fmt: skip
    backend = TransformersBackend(model)
    assert backend.patch_factor == 32
    text = backend.processor.batch_decode(backend.model_inputs([request])["input_ids"])[0]
    timestamps = media.frames.get(cached.video_keys[0]).timestamps_s
    # one marker per temporal patch of two frames, at the mean time of the pair
    expected = [(timestamps[i] + timestamps[i + 1]) / 2 for i in range(0, len(timestamps), 2)]
    for seconds in expected:
        assert f"<{seconds:.1f} seconds>" in text


def test_frames_as_images_carry_their_timestamps_as_in_training(
    synth_tree, tiny_model, tmp_path, monkeypatch
):
    """A processor without a video processor gets each frame as an image after its own time:
    the prompt layout the training backends use (media.chat.frame_messages), not bare images."""
    from videorl_kit.eval.backends.transformers_backend import TransformersBackend
    from videorl_kit.eval.requests import GenerationRequest, StoreMedia
    from videorl_kit.media.chat import frame_messages
    from videorl_kit.spec.prompt import render_prompt
    from videorl_kit.store import build_cache

    (task,) = load_tasks([synth_tree / "task_specs" / "synth-temporal.yaml"], limit=1)
    build_cache([task.spec], tmp_path / "store", workers=1)
    media = StoreMedia(tmp_path / "store")
    sample = task.samples[0]
    cached = media.sample_rows([task.id])[(task.id, sample.sample_id)]
    videos, _ = media.load(cached)
    prompt = render_prompt(task.spec, sample)
    request = GenerationRequest(
        task.id, sample.sample_id, prompt, "Be brief.", sample.problem_type.value, None,
        task.section.generation, 0, videos=videos,
    )  # fmt: skip
    frames = media.frames.get(cached.video_keys[0])
    messages, pictures = request.chat(frames_as_images=True)
    assert messages == frame_messages(prompt, "Be brief.", [frames], [])[0]
    assert len(pictures) == len(frames.frames) and len(frames.timestamps_s) > 1

    monkeypatch.setattr(TransformersBackend, "video_capable", property(lambda self: False))
    backend = TransformersBackend(tiny_model)
    inputs = backend.model_inputs([request])
    assert "pixel_values_videos" not in inputs
    text = backend.processor.batch_decode(inputs["input_ids"])[0]
    markers = [f"<{seconds:.1f} seconds>" for seconds in frames.timestamps_s]
    positions = [text.index(marker) for marker in markers]
    assert positions == sorted(positions)


def test_batching_is_pinned_to_one_sample_at_a_time(synth_tree, tiny_model, tmp_path):
    """Left-padded batches give each sample the next-token scores it gets alone (the batched
    path is a speed-up only), for video, image and text-only samples mixed in one batch."""
    import torch

    from videorl_kit.eval.backends.transformers_backend import TransformersBackend

    names = ["synth-multiple-choice.yaml", "synth-image-count.yaml", "synth-code.yaml"]
    tasks = load_tasks([synth_tree / "task_specs" / n for n in names], limit=2)
    requests = cached_requests(tasks, tmp_path / "store")
    backend = TransformersBackend(tiny_model)

    def last_scores(batch):
        inputs = backend.model_inputs(batch)
        with torch.inference_mode():
            return backend._model(**inputs).logits[:, -1, :]

    together = last_scores(requests)
    alone = torch.cat([last_scores([r]) for r in requests])
    assert together.shape[0] == len(requests) == 6
    torch.testing.assert_close(together, alone, rtol=1e-4, atol=1e-5)


def test_a_processor_without_video_support_gets_the_frames_as_images(runs, tiny_model, monkeypatch):
    from videorl_kit.eval.backends.transformers_backend import TransformersBackend
    from videorl_kit.eval.requests import CachedSample, GenerationRequest, StoreMedia
    from videorl_kit.spec.eval_section import GenerationParams

    out, results = runs["a"]
    record = _records(out, results)["synth-multiple-choice"][0]  # its media: the cache keys
    cached = CachedSample("ready", None, tuple(record["media"]), ())
    videos, _ = StoreMedia(results.run.store).load(cached)
    request = GenerationRequest(
        "synth-multiple-choice", record["sample_id"], record["prompt"], None, "multiple_choice",
        record["options"], GenerationParams(), 0, videos=videos,
    )  # fmt: skip
    backend = TransformersBackend(tiny_model)
    monkeypatch.setattr(TransformersBackend, "video_capable", property(lambda self: False))
    inputs = backend.model_inputs([request])
    n_frames = len(videos[0].frames)
    assert "pixel_values_videos" not in inputs
    assert inputs["image_grid_thw"].shape[0] == n_frames  # one image per cached frame
    text = backend.processor.batch_decode(inputs["input_ids"])[0]
    assert text.count("<|vision_start|>") == n_frames


def test_an_eval_of_a_variant_of_a_task_leaves_the_rows_training_reads(
    synth_tree, tiny_model, tmp_path
):
    """The store's samples table is what training reads: an eval of the first rows of a task
    under another budget builds the frames it needs, but never rewrites or deletes those rows."""
    from videorl_kit.store import CachedSampleDataset, FrameStore, build_cache

    spec = synth_tree / "task_specs" / "synth-count.yaml"
    store = tmp_path / "store"
    build_cache([spec], store, workers=1)
    training_rows = CachedSampleDataset(store, task_ids=["synth-count"]).rows
    assert len(training_rows) == 2
    results = run_eval(
        EvalConfig(specs=[spec], out=tmp_path / "run", model=str(tiny_model), store=store,
                   limit=1, overrides=["budget.video.max_frames=4", *SAMPLING])
    )  # fmt: skip
    assert CachedSampleDataset(store, task_ids=["synth-count"]).rows == training_rows
    (record,) = _records(tmp_path / "run", results)["synth-count"]
    assert record["media"] != training_rows[0]["video_keys"]  # frames under the eval's budget
    assert len(FrameStore.open(store).get(record["media"][0]).frames) == 4


def test_sampling_follows_the_spec_and_each_samples_seed_whatever_its_batch(tiny_model, tmp_path):
    """A sampled answer depends on the sample's seed only, not on the batch it runs in (so a
    resumed run or another --batch-size gives the same answers), and the spec's sampling
    parameters hold even when the model folder ships others (Qwen2.5-VL's say top_k=1)."""
    import shutil
    from dataclasses import replace

    from videorl_kit.eval.backends.transformers_backend import TransformersBackend
    from videorl_kit.eval.requests import GenerationRequest
    from videorl_kit.spec.eval_section import GenerationParams

    sampled = GenerationParams(temperature=1.0, max_new_tokens=6)
    requests = [
        GenerationRequest("t", f"s{i}", f"Question {i}?", None, "open_ended", None, sampled, i)
        for i in range(4)
    ]
    backend = TransformersBackend(tiny_model)
    together = backend.generate(requests)
    assert [backend.generate([r])[0] for r in requests] == together
    assert backend.generate(requests[2:] + requests[:2]) == together[2:] + together[:2]
    greedy = backend.generate(
        [replace(r, generation=GenerationParams(max_new_tokens=6)) for r in requests]
    )
    assert together != greedy and len(set(together)) > 1
    pinned = tmp_path / "pinned"
    shutil.copytree(tiny_model, pinned)
    config = json.loads((pinned / "generation_config.json").read_text())
    config.update(do_sample=True, temperature=0.1, top_k=1, top_p=0.001)
    (pinned / "generation_config.json").write_text(json.dumps(config))
    assert TransformersBackend(pinned).generate(requests) == together
