"""The ``trajectories`` commands: ``import``, ``stats`` and ``export``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from videorl_kit.core.terminal import TerminalConsole, echo

if TYPE_CHECKING:
    from videorl_kit.train.recipe import BackendChecks

JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
StoreOption = Annotated[Path, typer.Option("--store", help="Store folder (Lance tables).")]
TaskOption = Annotated[
    list[str] | None, typer.Option("--task", help="Only this task (repeat for several).")
]
SourceOption = Annotated[
    list[str] | None,
    typer.Option("--source", help="Only sources matching this glob, e.g. 'eval:*' (repeatable)."),
]

trajectories_app = typer.Typer(
    name="trajectories",
    help="Offline trajectories in a store: import (re-scored), statistics, export.",
    no_args_is_help=True,
)


def validate_recipe_document(
    path: str | Path, backends: BackendChecks | None = None
) -> str | tuple[str, list[str]]:
    """``validate``'s loader of recipes: the recipe's own checks and its backend's problems
    (``backends``: the CLI's, by name), then, for a recipe with an ``offline:`` section, the
    section against the recipe's store. Returns the id, or ``(id, notes)`` with the
    trajectories found per task; raises ``SpecError`` listing every problem.

    Example:
        >>> validate_recipe_document("recipes/tiny-grpo.yaml")
        'tiny-grpo'
    """
    from videorl_kit.spec.loader import SpecError
    from videorl_kit.spec.yaml_source import SpecIssue, load_yaml_with_includes
    from videorl_kit.train.recipe import load_recipe

    loaded = load_recipe(path, backends=backends)
    if loaded.recipe.offline is None:
        return loaded.recipe.id
    from videorl_kit.train.offline.select import store_problems  # Lance, only when needed

    task_ids = [entry.spec.id for entry in loaded.tasks]
    store = loaded.resolve(loaded.recipe.store)
    problems, notes = store_problems(store, loaded.recipe.offline, task_ids)
    if problems:
        doc = load_yaml_with_includes(path)
        issues = []
        for where, message in problems:
            file, line = doc.origin(tuple(where.split(".", 1)))
            issues.append(SpecIssue(file, line, where, message))
        raise SpecError(issues)
    return loaded.recipe.id, notes


def _print_json(payload: Any) -> None:
    typer.echo(json.dumps(payload, indent=2, default=str))


@trajectories_app.command("import")
def import_command(
    files: Annotated[list[Path], typer.Argument(metavar="FILE...", help="JSONL, JSON or Parquet.")],
    store: StoreOption,
    spec: Annotated[
        list[str] | None,
        typer.Option("--spec", help="Spec of the rows' task (needed when rows do not name it)."),
    ] = None,
    source: Annotated[
        str | None,
        typer.Option("--source", help="Source name (default offline:<file>, eval:<run>)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Import responses into the store's trajectories, each scored again by the task's verifier.

    Rows name a sample (sample_id, or the task's id column) and the response; optionally the
    model, token ids with their tokenizer, behaviour log-probs and the file's own reward. The
    public sets' has_offline_trajectory / offline_output rows and `eval` samples files are
    read as they are. Any bad row stops the import (every one is listed as file:line); the
    import is one commit, and importing the same file again adds nothing.

    Examples:

      videorl-kit trajectories import curated.jsonl --store cache/ --source curated

      videorl-kit trajectories import rows.json --spec task_specs/synth-count.yaml --store cache/

      videorl-kit trajectories import runs/eval1/samples_*.jsonl --store cache/ --json
    """
    from videorl_kit.train.offline.importer import import_trajectories

    console = TerminalConsole(stderr=True, markup=False)
    report = import_trajectories(
        files,
        store,
        specs=spec or [],
        source=source,
        progress=None if as_json else (lambda m: console.print(m, markup=False)),
    )
    if as_json:
        _print_json(report.as_dict())
    else:
        TerminalConsole(soft_wrap=True, markup=False).print(report.summary())


@trajectories_app.command("stats")
def stats_command(
    store: StoreOption,
    task: TaskOption = None,
    source: SourceOption = None,
    correct_at: Annotated[
        float, typer.Option("--correct-at", help="Accuracy that counts as correct.")
    ] = 1.0,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Also write a reward histogram (PNG).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Per task and source: counts, rewards, share correct, lengths, samples solved.

    The count, reward distribution, share correct, response lengths, and the samples with at
    least one correct trajectory, computed with polars over the Lance table.

    Examples:

      videorl-kit trajectories stats --store cache/

      videorl-kit trajectories stats --store cache/ --source 'eval:*' --plot rewards.png --json
    """
    from videorl_kit.train.offline.stats import plot_rewards, stats_table, trajectory_stats

    rows = trajectory_stats(store, tasks=task or (), sources=source or (), correct_at=correct_at)
    written = None
    if plot is not None and rows:
        written = plot_rewards(store, plot, tasks=task or (), sources=source or ())
    if as_json:
        _print_json({"store": str(store), "rows": rows, "plot": str(written) if written else None})
        return
    console = TerminalConsole(markup=False)
    if not console.is_terminal:  # piped: no terminal width to fit, keep each row on one line
        console = TerminalConsole(width=200, markup=False)
    if not rows:
        console.print(f"{store}: no trajectories match", markup=False)
        return
    console.print(stats_table(rows))
    if written:
        console.print(f"reward histogram: {written}", markup=False)


@trajectories_app.command("export")
def export_command(
    store: StoreOption,
    out: Annotated[Path, typer.Option("--out", help="Parquet file to write.")],
    min_reward: Annotated[
        float | None, typer.Option("--min-reward", help="Only graded rewards at least this.")
    ] = None,
    task: TaskOption = None,
    source: SourceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write trajectories with their samples' prompts and answers to a Parquet file.

    The file loads with `datasets.load_dataset("parquet", data_files=FILE)`.

    Examples:

      videorl-kit trajectories export --store cache/ --out good.parquet --min-reward 1.0

      videorl-kit trajectories export --store cache/ --out eval.parquet --source 'eval:*' --json
    """
    from videorl_kit.train.offline.export import export_trajectories

    report = export_trajectories(
        store, out, min_reward=min_reward, tasks=task or (), sources=source or ()
    )
    if as_json:
        _print_json(report.as_dict())
    else:
        echo(f"wrote {report.n_rows} trajectories of {report.n_tasks} tasks to {report.out}")


def register(app: typer.Typer) -> None:
    """Add the ``trajectories`` group to the ``videorl-kit`` app."""
    app.add_typer(trajectories_app, name="trajectories")
