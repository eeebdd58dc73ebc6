"""The start-up patches apply to OpenRLHF 0.11.2 only, once, and where the workers import it."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import subprocess
import sys
import textwrap
import types

import pytest

from tests.adapters.openrlhf.conftest import REPO, require_openrlhf
from videorl_kit.adapters.openrlhf import patches


def test_refuses_another_openrlhf_version(monkeypatch):
    require_openrlhf()
    real_version = importlib.metadata.version

    def version(name: str) -> str:
        return "0.11.3" if name == "openrlhf" else real_version(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    with pytest.raises(patches.PatchError, match=r"refuse to patch openrlhf 0\.11\.3"):
        patches.setup_worker()
    with pytest.raises(patches.PatchError, match=r"refuse to patch openrlhf 0\.11\.3"):
        patches.raise_vllm_video_limit(2, types.SimpleNamespace())


def test_refuses_an_actor_whose_source_changed(tmp_path, monkeypatch):
    module_file = tmp_path / "changed_actor.py"
    module_file.write_text(
        textwrap.dedent(
            """
            class Actor:
                def forward(self, sequences, **mm_inputs):
                    key = "mm_token_type_ids"
                    return key
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import changed_actor

    with pytest.raises(patches.PatchError, match="does not hold the line"):
        patches.patch_actor_forward(changed_actor, check_version=False)
    assert changed_actor.Actor().forward(None) == "mm_token_type_ids"  # left untouched


def test_video_limit_keeps_the_image_limit_and_an_explicit_video_limit():
    @dataclasses.dataclass
    class EngineArgs:
        model: str
        limit_mm_per_prompt: dict | None = None

    vllm = types.SimpleNamespace(AsyncEngineArgs=EngineArgs)
    patches.raise_vllm_video_limit(3, vllm, check_version=False)
    patches.raise_vllm_video_limit(9, vllm, check_version=False)  # once is enough
    assert vllm.AsyncEngineArgs(model="m").limit_mm_per_prompt == {"video": 3}
    given = vllm.AsyncEngineArgs(model="m", limit_mm_per_prompt={"image": 8, "video": 1})
    assert given.limit_mm_per_prompt == {"image": 8, "video": 1}
    assert dataclasses.fields(given) == dataclasses.fields(EngineArgs)
    with pytest.raises(ValueError, match="at least 1"):
        patches.raise_vllm_video_limit(0, vllm, check_version=False)


def test_setup_hook_patches_the_actor_when_a_worker_imports_it():
    """A fresh interpreter, like a Ray worker: hook first, OpenRLHF's import later."""
    require_openrlhf()
    script = textwrap.dedent(
        """
        import sys, types
        sys.modules["flash_attn_2_cuda"] = types.ModuleType("flash_attn_2_cuda")
        from videorl_kit.adapters.openrlhf.patches import setup_worker
        setup_worker()
        assert "openrlhf.models.actor" not in sys.modules  # the hook imports nothing heavy
        from openrlhf.models import Actor
        print(getattr(Actor.forward, "_videorl_kit_patched", False), Actor.forward.__qualname__)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-2:] == ["True", "Actor.forward"]
