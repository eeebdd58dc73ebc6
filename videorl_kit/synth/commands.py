"""The ``videorl-kit synth`` command: generate the synthetic demo data."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from videorl_kit.core.errors import UserError
from videorl_kit.core.terminal import TerminalConsole
from videorl_kit.synth.catalog import TASK_NAMES

if TYPE_CHECKING:
    from videorl_kit.synth.suite import TaskSummary


def synth(
    out_dir: Annotated[
        Path, typer.Argument(metavar="OUT_DIR", help="Folder for the JSONL files and media.")
    ],
    n: Annotated[int, typer.Option("--n", "-n", help="Rows (questions) per task.")] = 8,
    seed: Annotated[
        int, typer.Option("--seed", "-s", help="Random seed; same seed, same files.")
    ] = 0,
    task: Annotated[
        list[str] | None,
        typer.Option("--task", "-t", help=f"Only this task (repeatable): {', '.join(TASK_NAMES)}."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
) -> None:
    """Generate synthetic clips and stills with exact answers, one JSONL per task.

    Writes OUT_DIR/<task>.jsonl (EasyVideoR1 rows), OUT_DIR/videos/*.mp4,
    OUT_DIR/images/*.png and OUT_DIR/manifest.json. The same seed gives the same files.

    Examples:

      videorl-kit synth data/synth

      videorl-kit synth data/synth --n 32 --seed 1 --json

      videorl-kit synth /tmp/synth --task count --task tracking

      videorl-kit synth data/synth && videorl-kit validate task_specs/synth-*.yaml
    """
    if n < 1:
        raise UserError(f"--n must be at least 1, got {n}")
    from videorl_kit.synth.suite import generate_suite

    console = TerminalConsole(stderr=True, markup=False)
    started = time.perf_counter()
    with console.status("generating…", spinner="dots") as status:

        def progress(summary: TaskSummary) -> None:
            status.update(f"generating… {summary.name} done")

        manifest = generate_suite(
            out_dir, n_per_task=n, seed=seed, tasks=task, on_task_done=None if as_json else progress
        )
    seconds = time.perf_counter() - started
    if as_json:
        payload = {k: v for k, v in manifest.to_dict().items() if k != "files"}
        payload |= {"out_dir": str(out_dir), "seconds": round(seconds, 3)}
        typer.echo(json.dumps(payload, indent=2))
        return
    table = Table("file", "problem type", "data", "rows", title=f"synthetic suite in {out_dir}")
    for summary in manifest.tasks:
        table.add_row(summary.file, summary.problem_type, summary.data_type, str(summary.rows))
    out = TerminalConsole(soft_wrap=True, markup=False)
    out.print(table)
    out.print(
        f"{manifest.n_rows} rows, {manifest.n_videos} videos, {manifest.n_images} images "
        f"(seed {seed}, generator v{manifest.generator_version}) in {seconds:.1f} s",
        markup=False,
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    """Add ``synth`` to the ``videorl-kit`` app."""
    app.command("synth")(synth)
