"""The ``openrlhf`` training backend: write the run bundle, then submit it to a Ray cluster.

``videorl-kit train RECIPE --backend openrlhf --dry-run --output DIR`` writes the bundle
(:mod:`.bundle`) and prints how to launch it; without ``--dry-run`` the command also submits
the bundle's job to the Ray cluster named by ``RAY_ADDRESS`` (else the recipe's
``openrlhf.ray_address``, else a head node on this machine) and follows its logs.

Example:
    >>> OpenRLHFBackend().name
    'openrlhf'
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from videorl_kit.adapters.openrlhf.bundle import write_bundle
from videorl_kit.adapters.openrlhf.launch import DEFAULT_RAY_ADDRESS, submit
from videorl_kit.adapters.openrlhf.limits import bundle_path_problem, recipe_problems
from videorl_kit.adapters.openrlhf.patches import SUPPORTED_OPENRLHF
from videorl_kit.adapters.openrlhf.planning import plan_bundle
from videorl_kit.core.errors import UserError


def ray_address(recipe: Any) -> str:
    """Where the job goes: ``RAY_ADDRESS``, else ``openrlhf.ray_address``, else this machine.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> os.environ.pop("RAY_ADDRESS", None) and None
        >>> ray_address(NS(openrlhf=NS(ray_address=None)))
        'http://127.0.0.1:8265'
    """
    return os.environ.get("RAY_ADDRESS") or recipe.openrlhf.ray_address or DEFAULT_RAY_ADDRESS


def hub_model_problem(model: Any) -> str | None:
    """Why OpenRLHF cannot train a ``hf://`` model as given (None: not a Hub model).

    OpenRLHF loads ``--actor.model_name_or_path`` by name on every node, without a
    revision: a Hub name would train whatever the repo holds that day, and every node (and
    the bundle's processor) would fetch it. The kit therefore trains only a downloaded
    folder; an unpinned name is told to pin a revision first.

    Example:
        >>> from videorl_kit.train.plan import ModelSource
        >>> print(hub_model_problem(ModelSource("hub", "Qwen/Qwen2.5-VL-7B-Instruct")))
        ... # doctest: +NORMALIZE_WHITESPACE
        model hf://Qwen/Qwen2.5-VL-7B-Instruct: not pinned; OpenRLHF runs need a pinned,
        downloaded model: pin a revision (hf://ORG/NAME@REV), download it (hf download
        Qwen/Qwen2.5-VL-7B-Instruct --revision REV --local-dir DIR) and set model: DIR
        (or --model DIR)
        >>> hub_model_problem(ModelSource("local", "/models/qwen")) is None
        True
    """
    if model.kind != "hub":
        return None
    download = shlex.join(
        ["hf", "download", model.name, "--revision", model.revision or "REV", "--local-dir", "DIR"]
    )
    if not model.revision:
        return (
            f"model {model.describe()}: not pinned; OpenRLHF runs need a pinned, downloaded "
            f"model: pin a revision (hf://ORG/NAME@REV), download it ({download}) and set "
            "model: DIR (or --model DIR)"
        )
    return (
        f"model {model.describe()}: OpenRLHF {SUPPORTED_OPENRLHF} loads models by name "
        f"without a revision; download that revision to shared storage ({download}) and "
        "set model: DIR"
    )


class OpenRLHFBackend:
    """Trains through OpenRLHF 0.11.2's Ray PPO engine (``videorl_kit.train.run`` calls it)."""

    name = "openrlhf"

    def problems(self, loaded: Any) -> list[tuple[str, str]]:
        """What OpenRLHF 0.11.2 would refuse in the recipe, as ``(field path, message)``
        (:func:`.limits.recipe_problems`: cluster sizing, extra flags, the bundle folder, the
        offline section).

        Example:
            >>> from videorl_kit.train.recipe import load_recipe
            >>> OpenRLHFBackend().problems(load_recipe("recipes/qwen2.5-vl-7b-grpo.yaml"))
            []
        """
        return recipe_problems(loaded)

    def check(self, plan: Any) -> None:
        """Refuse what OpenRLHF cannot load, before anything is written or the Hub is asked:
        a model on the Hub (:func:`hub_model_problem`), a bundle folder OpenRLHF would
        misread (``train --output``; the recipe's own ``output_dir`` is checked when it is
        validated)."""
        problem = bundle_path_problem(Path(plan.output_dir).resolve())
        if problem:
            raise UserError(problem)
        problem = hub_model_problem(plan.model)
        if problem:
            raise UserError(problem)

    def plan(self, draft: Any) -> Any:
        """The bundle's argv, the cluster's sizing and the memory inputs of ``train --plan``
        (:mod:`.planning`), computed without the store or the model's files."""
        return plan_bundle(draft, ray_address(draft.recipe))

    def prepare(self, plan: Any) -> dict[str, Any]:
        """Write the run bundle into the run folder; return what ``--dry-run`` prints."""
        bundle = write_bundle(plan)
        return {
            "backend": self.name,
            "bundle": str(bundle.root),
            "video": bundle.video,
            "prompts": bundle.prompts,
            "argv": str(bundle.root / "argv.json"),
            "launch": bundle.command(),
        }

    def train(self, plan: Any) -> None:
        """Submit the bundle's job and follow its logs until it ends."""
        submit(Path(plan.output_dir).resolve(), ray_address(plan.recipe))
