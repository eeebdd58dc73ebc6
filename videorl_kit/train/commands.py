"""Training commands: ``tiny-model``, ``train`` and ``plot``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from videorl_kit.train.tiny_model import FAMILIES, build_tiny_model, check_family


def tiny_model(
    out: Annotated[Path, typer.Argument(help="Folder for the model, tokenizer and processor.")],
    family: Annotated[
        str, typer.Option("--family", help=f"Model family: {' | '.join(FAMILIES)}.")
    ] = "qwen2.5-vl",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random weights.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
) -> None:
    """Write a tiny random Qwen-VL model that loads offline (tests, CPU demos).

    The folder loads with `AutoProcessor` and `AutoModelForImageTextToText` with
    `HF_HUB_OFFLINE=1`; the same family and seed always give the same bytes.

    Examples:

      videorl-kit tiny-model models/tiny-qwen25 --family qwen2.5-vl

      videorl-kit tiny-model models/tiny-qwen3 --family qwen3-vl --seed 1 --json
    """
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # one line of output, not a shard-writing bar
    info = build_tiny_model(out, family=check_family(family), seed=seed)
    if as_json:
        typer.echo(json.dumps(info.as_dict(), indent=2))
        return
    typer.echo(
        f"wrote a tiny {info.family} model ({info.n_parameters:,} parameters, vocabulary "
        f"{info.vocab_size}, resize factor {info.patch_factor}) to {info.path}"
    )


def register(app: typer.Typer) -> None:
    """Add the training commands to the ``videorl-kit`` app."""
    app.command("tiny-model")(tiny_model)
