"""``videorl-kit train RECIPE --backend openrlhf --dry-run``: the run bundle, checked by OpenRLHF.

Every check goes through OpenRLHF 0.11.2's own code: its parser and post-parse checks on
``argv.json``, ``blending_datasets`` + ``PromptDataset`` on the prompt files with the tiny model's
processor, its single-turn executor on ``reward_func.py``, its agent loading on ``agent_func.py``,
and Ray's own runtime-env validation and merge on ``runtime_env.json``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from typer.testing import CliRunner

from tests.adapters.openrlhf.conftest import require_openrlhf
from tests.adapters.openrlhf.test_native_video import load_agent_executor, prompt_dataset
from tests.adapters.openrlhf.test_reward import FakeEngine
from videorl_kit.adapters.openrlhf.job_entry import MODULE as JOB_ENTRY
from videorl_kit.adapters.openrlhf.labels import decode_label
from videorl_kit.adapters.openrlhf.parser_check import ENTRY_MODULE
from videorl_kit.cli import app
from videorl_kit.store import CachedSampleDataset

runner = CliRunner()


def recipe_variant(workspace: Path, name: str, **changes) -> Path:
    """A recipe next to tiny-grpo.yaml that includes it and overrides ``changes``."""
    path = workspace / "recipes" / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"include": "tiny-grpo.yaml", "id": name, **changes}), "utf-8")
    return path


def dry_run(recipe: Path, output: Path, *extra: str):
    result = runner.invoke(
        app, ["train", str(recipe), "--backend", "openrlhf", "--dry-run", "--output", str(output),
              *extra],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def native_bundle(workspace, tmp_path_factory) -> Path:
    """The bundle of the shipped tiny recipe as it is (native video)."""
    out = tmp_path_factory.mktemp("bundles") / "tiny-native"
    result = dry_run(workspace / "recipes" / "tiny-grpo.yaml", out)
    assert f"bash {out}/launch.sh" in result.output
    return out


@pytest.fixture(scope="module")
def frames_bundle(workspace, tmp_path_factory) -> Path:
    """The same recipe with videos sent as frames (stock OpenRLHF), sized for two nodes of 8
    GPUs with vLLM engines of 2 GPUs each: the sizing is the recipe's, not a script's."""
    cluster = {"video": "frames_as_images", "nodes": 2, "gpus_per_node": 8, "vllm_engines": 8,
               "vllm_tensor_parallel_size": 2}  # fmt: skip
    optim = {"prompts_per_step": 4, "micro_batch_size": 1}  # 16 micro-batches for 16 GPUs
    recipe = recipe_variant(workspace, "tiny-frames", openrlhf=cluster, optim=optim)
    out = tmp_path_factory.mktemp("bundles") / "tiny-frames"
    dry_run(recipe, out)
    return out


@pytest.mark.parametrize("key", ["../../escaped", "/tmp/escaped", "0f" * 31 + "/x"])
def test_bundle_media_are_named_by_checked_cache_keys_never_paths(tmp_path, key):
    """A key from an edited store (which its reader refuses anyway) never names a path: the
    bundle's media writers take only 64-hex-digit keys (issue 19 §4, round 3 attack 11)."""
    import numpy as np

    from videorl_kit.adapters.openrlhf.media import write_video
    from videorl_kit.adapters.openrlhf.prompts import _write_media

    frames = np.zeros((1, 28, 28, 3), dtype=np.uint8)
    bundle = tmp_path / "bundle"
    with pytest.raises(ValueError, match="is not a cache key"):
        write_video(bundle / "media", key, frames, {}, [0.0])
    for video_path in ("native", "frames_as_images"):
        item = SimpleNamespace(cache_key=key, modality="video", frames=frames,
                               timestamps_s=[0.0], video_metadata=dict)  # fmt: skip
        with pytest.raises(ValueError, match="is not a cache key"):
            _write_media(item, bundle, video_path)
    assert sorted(p.name for p in tmp_path.rglob("*")) == []
    good = write_video(bundle / "media", "0f" * 32, frames, {}, [0.0])
    assert good == bundle / "media" / f"{'0f' * 32}.npy" and good.with_suffix(".json").exists()


def argv_of(bundle: Path) -> list[str]:
    return json.loads((bundle / "argv.json").read_text(encoding="utf-8"))


def prompt_room(bundle: Path) -> int:
    """The longest prompt OpenRLHF accepts for this bundle (it refuses to cut a VLM prompt)."""
    argv = argv_of(bundle)
    value = {flag: argv[i + 1] for i, flag in enumerate(argv[:-1]) if flag.startswith("--")}
    return int(value["--data.max_len"]) - int(value["--rollout.max_new_tokens"])


def test_bundle_holds_every_part(native_bundle):
    names = {p.name for p in native_bundle.iterdir()}
    assert {"argv.json", "launch.sh", "runtime_env.json", "reward_func.py", "agent_func.py",
            "tasks.resolved.json", "recipe.resolved.yaml", "data", "media", "kit"} <= names  # fmt: skip
    tasks = json.loads((native_bundle / "tasks.resolved.json").read_text(encoding="utf-8"))
    assert sum(task["probability"] for task in tasks["tasks"]) == pytest.approx(1.0)
    for task in tasks["tasks"]:
        assert Path(task["file"]).is_file() and task["prompts"] > 0
        assert task["spec"]["id"] == task["id"] and task["source_file"]
    for module in ("reward_func.py", "agent_func.py"):
        text = (native_bundle / module).read_text(encoding="utf-8")
        assert f"TASKS_FILE = '{native_bundle}/tasks.resolved.json'" in text
        assert "from ." not in text  # OpenRLHF loads it by path: absolute imports only
    assert (native_bundle / "kit/videorl_kit/adapters/openrlhf/reward.py").is_file()


@pytest.mark.parametrize("which", ["native_bundle", "frames_bundle"])
def test_argv_is_accepted_by_openrlhfs_parser(which, request):
    require_openrlhf()
    from videorl_kit.adapters.openrlhf.parser_check import OpenRLHFParser

    bundle = request.getfixturevalue(which)
    verdict = OpenRLHFParser().check(argv_of(bundle))
    assert verdict.accepted, verdict.error
    assert verdict.warnings == ()  # no flag silently overridden by OpenRLHF
    args = verdict.args
    files = args["data"]["prompt_dataset"].split(",")
    assert all(Path(f).is_file() for f in files)
    assert args["actor"]["model_name_or_path"] == str(bundle / "base-model")
    if which == "native_bundle":
        assert args["train"]["agent_func_path"] == str(bundle / "agent_func.py")
        assert args["reward"]["remote_url"] == ["agent"]
    else:
        assert args["reward"]["remote_url"] == [str(bundle / "reward_func.py")]
        assert (args["actor"]["num_nodes"], args["actor"]["num_gpus_per_node"]) == (2, 8)
        assert (args["vllm"]["num_engines"], args["vllm"]["tensor_parallel_size"]) == (8, 2)


@pytest.mark.parametrize("which", ["native_bundle", "frames_bundle"])
def test_prompts_load_through_openrlhfs_dataset_code(which, request, workspace):
    require_openrlhf()
    from transformers import AutoProcessor

    bundle = request.getfixturevalue(which)
    processor = AutoProcessor.from_pretrained(bundle / "base-model")
    tasks = json.loads((bundle / "tasks.resolved.json").read_text(encoding="utf-8"))["tasks"]
    argv = argv_of(bundle)
    mixing = argv[argv.index("--data.prompt_probs") + 1]
    assert [float(p) for p in mixing.split(",")] == [t["probability"] for t in tasks]
    dataset = prompt_dataset([Path(t["file"]) for t in tasks], processor, mixing)
    assert len(dataset) >= sum(t["prompts"] for t in tasks)  # interleaved until all are used
    answers = {}
    for task in tasks:
        kit = CachedSampleDataset(workspace / "store", task_ids=[task["id"]])
        answers |= {(task["id"], r["sample_id"]): r["answer"] for r in kit.rows}
    seen = set()
    for index in range(len(dataset)):
        datasource, prompt, label_text, refs = dataset[index]
        label = decode_label(label_text)
        assert datasource == label.task_id
        assert answers[(label.task_id, label.sample_id)] == label.answer
        assert prompt.endswith("<|im_start|>assistant\n")
        assert all(Path(ref).is_file() for ref in refs)
        pads = prompt.count("<|image_pad|>") + prompt.count("<|video_pad|>")
        assert pads == len(refs)  # one placeholder per media file
        seen.add((label.task_id, label.sample_id))
    assert seen == set(answers)


def test_native_agent_of_the_bundle_rolls_out_every_task(native_bundle):
    require_openrlhf()
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(native_bundle / "base-model")
    executor = load_agent_executor(native_bundle / "agent_func.py")
    kinds = set()
    for file in sorted((native_bundle / "data").glob("train.*.jsonl")):
        _, prompt, label, refs = prompt_dataset([file], processor)[0]
        answer = decode_label(label).answer
        engine = FakeEngine(processor.tokenizer, f"<answer>{answer}</answer><|im_end|>")
        params = SimpleNamespace(max_tokens=16, logprobs=None)
        result = asyncio.run(executor.execute(prompt, label, params, 2048, processor, engine, refs))
        assert result["reward"] == pytest.approx(1.0)
        assert result["extra_logs"][f"task/{decode_label(label).task_id}/accuracy"] == 1.0
        assert result["action_ranges"][0][0] <= prompt_room(native_bundle)  # sized by the bound
        kinds.update(key for key in ("pixel_values_videos", "pixel_values")
                     if key in result["mm_train_inputs"])  # fmt: skip
    assert kinds == {"pixel_values_videos", "pixel_values"}  # video and image tasks


def test_frames_bundle_rewards_through_openrlhfs_own_image_path(frames_bundle):
    require_openrlhf()
    from openrlhf.utils.agent import SingleTurnAgentExecutor
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(frames_bundle / "base-model")
    files = sorted((frames_bundle / "data").glob("train.*.jsonl"))
    executor = SingleTurnAgentExecutor(str(frames_bundle / "reward_func.py"))
    dataset = prompt_dataset(files, processor)
    rewards = []
    for index in range(len(dataset)):
        _, prompt, label, refs = dataset[index]
        answer = decode_label(label).answer
        engine = FakeEngine(processor.tokenizer, f"<answer>{answer}</answer><|im_end|>")
        params = SimpleNamespace(max_tokens=16, logprobs=None)
        result = asyncio.run(executor.execute(prompt, label, params, 4096, processor, engine, refs))
        assert result["mm_train_inputs"]["pixel_values"].shape[0] > 0
        assert result["action_ranges"][0][0] <= prompt_room(frames_bundle)
        rewards.append(result["reward"])
    assert rewards and all(r == pytest.approx(1.0) for r in rewards)


def test_launch_script_submits_exactly_the_argv(native_bundle):
    script = (native_bundle / "launch.sh").read_text(encoding="utf-8")
    subprocess.run(["bash", "-n", str(native_bundle / "launch.sh")], check=True)
    assert 'ray job submit --address "$RAY_ADDRESS"' in script
    assert '--runtime-env-json "$(cat "$BUNDLE/runtime_env.json")"' in script
    command = shlex.split(script.split(" -- ", 1)[1])
    # the job runs OpenRLHF's entry module on argv.json (test_script_injection runs it)
    assert command == ["python", "-m", JOB_ENTRY, str(native_bundle / "argv.json")]


def test_runtime_env_is_valid_for_ray_and_merges_with_openrlhfs_own(native_bundle):
    from ray.runtime_env import RuntimeEnv
    from ray.runtime_env.runtime_env import _merge_runtime_env

    env = json.loads((native_bundle / "runtime_env.json").read_text(encoding="utf-8"))
    RuntimeEnv(**env)  # Ray's own field validation
    assert env["worker_process_setup_hook"] == "videorl_kit.adapters.openrlhf.patches.setup_worker"
    assert Path(env["py_modules"][0]).name == "videorl_kit"
    assert "pip" not in env  # Ray would clone the whole environment per job and node
    requirements = (native_bundle / "kit" / "requirements.txt").read_text(encoding="utf-8")
    assert any(line.startswith("pydantic") for line in requirements.splitlines())
    # train_ppo_ray's ray.init passes these; a job env setting one of them is refused by Ray
    driver = {"env_vars": {"TOKENIZERS_PARALLELISM": "true", "NCCL_DEBUG": "WARN",
                           "RAY_ENABLE_ZERO_COPY_TORCH_TENSORS": "1"}}  # fmt: skip
    assert _merge_runtime_env(env, driver) is not None


def test_without_a_cluster_train_says_so_in_one_line(workspace, tmp_path):
    command = "from videorl_kit.cli import main; main()"
    recipe = workspace / "recipes" / "tiny-grpo.yaml"
    env = {**os.environ, "RAY_ADDRESS": "http://127.0.0.1:9"}  # the discard port: no cluster
    done = subprocess.run(
        [sys.executable, "-c", command, "train", str(recipe), "--backend", "openrlhf",
         "--output", str(tmp_path / "run")],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [done.stderr.strip().splitlines()[-1]]
    assert errors[0].startswith("error: no Ray cluster reachable at http://127.0.0.1:9 (")
    assert (tmp_path / "run" / "argv.json").is_file()  # the bundle is written first


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray cluster with the job API, owned (and stopped) by this test process."""
    require_openrlhf()
    import socket

    import ray

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    saved = dict(os.environ)
    # the dashboard's modules start in subprocesses; a busy 2-core machine needs more than 30 s
    os.environ.setdefault("RAY_DASHBOARD_SUBPROCESS_MODULE_WAIT_READY_TIMEOUT", "300")
    # a node's `python` is the OpenRLHF environment's (as in an activated env or an image)
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    ray.init(address="local", num_cpus=2, include_dashboard=True, dashboard_host="127.0.0.1",
             dashboard_port=port, configure_logging=False)  # fmt: skip
    yield f"http://127.0.0.1:{port}"
    ray.shutdown()
    os.environ.clear()
    os.environ.update(saved)


PROBE = """
import importlib.util, sys, ray
ray.init()

@ray.remote
def probe(reward_file):
    import videorl_kit
    hooked = any(type(f).__name__ == "_PatchAfterImport" for f in sys.meta_path)
    spec = importlib.util.spec_from_file_location("reward_func", reward_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = module.reward_func(["x"], ["x"], ["not a label"])
    return hooked, videorl_kit.__file__, out["rewards"], out["extra_logs"]["error/label"]

print("PROBE", *ray.get(probe.remote(sys.argv[1])))
"""


@pytest.mark.slow
def test_the_bundle_runs_as_a_ray_job(ray_cluster, native_bundle, capsys):
    """The runtime env ships the kit and installs the patch hook in workers; the job runs
    OpenRLHF's entry module with the bundle's argv (it stops at `import vllm` on CPU)."""
    from ray.job_submission import JobStatus, JobSubmissionClient

    from videorl_kit.adapters.openrlhf.launch import submit
    from videorl_kit.core.errors import UserError

    env = json.loads((native_bundle / "runtime_env.json").read_text(encoding="utf-8"))
    client = JobSubmissionClient(ray_cluster)
    reward_file = native_bundle / "reward_func.py"
    job = client.submit_job(entrypoint=f"python -c {shlex.quote(PROBE)} {reward_file}",
                            runtime_env=env)  # fmt: skip
    status = _wait(client, job)
    logs = client.get_job_logs(job)
    assert status == JobStatus.SUCCEEDED, logs[-3000:]
    probe = next(line for line in logs.splitlines() if line.startswith("PROBE"))
    hooked, kit_file, reward, label_error = probe.split()[1:]
    assert hooked == "True"  # worker_process_setup_hook ran in the worker
    assert "runtime_resources" in kit_file  # the bundle's copy of the kit, shipped by Ray
    assert (reward, label_error) == ("0.0", "1.0")

    with pytest.raises(UserError, match=r"ended FAILED \(Job entrypoint command failed"):
        submit(native_bundle, ray_cluster)
    followed = capsys.readouterr().out
    assert f"-m {ENTRY_MODULE} --actor.model_name_or_path {native_bundle}/base-model" in followed
    assert "No module named 'vllm'" in followed  # OpenRLHF's trainer needs vLLM: GPU only


def _wait(client, job: str, timeout_s: float = 600):
    from ray.job_submission import JobStatus

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = client.get_job_status(job)
        if status in {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.STOPPED}:
            return status
        time.sleep(1)
    client.stop_job(job)
    pytest.fail(f"job {job} did not end within {timeout_s} s")


def test_a_pinned_hub_revision_is_refused_before_anything_is_written(workspace, tmp_path):
    from videorl_kit.core.errors import UserError

    result = runner.invoke(
        app, ["train", str(workspace / "recipes" / "tiny-grpo.yaml"), "--backend", "openrlhf",
              "--dry-run", "--model", "hf://Qwen/Qwen2.5-VL-7B-Instruct@0123abc",
              "--output", str(tmp_path / "run")],
    )  # fmt: skip
    assert isinstance(result.exception, UserError), result.output
    assert "loads models by name without a revision" in str(result.exception)
    assert "--revision 0123abc --local-dir DIR" in str(result.exception)
    assert not (tmp_path / "run").exists()
