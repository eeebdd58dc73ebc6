"""Hub commands: ``publish`` and ``pull``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from videorl_kit.core.errors import UserError
from videorl_kit.core.terminal import TerminalConsole
from videorl_kit.spec.loader import discover_spec_paths

JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
EndpointOption = Annotated[
    str | None,
    typer.Option(
        "--endpoint",
        help="Hub URL (default: $HF_ENDPOINT, else https://huggingface.co).",
        show_default=False,
    ),
]
TokenOption = Annotated[
    str | None,
    typer.Option(
        "--token",
        help="Hub token (default: $HF_TOKEN or the saved `hf auth login` token).",
        show_default=False,
    ),
]


def _out() -> TerminalConsole:
    return TerminalConsole(soft_wrap=True, markup=False)


def _err() -> TerminalConsole:
    return TerminalConsole(stderr=True, soft_wrap=True, markup=False)


def publish_command(
    specs: Annotated[list[str], typer.Argument(help="Spec files or folders of specs.")],
    repo: Annotated[
        str, typer.Option("--repo", "-r", help="Dataset repo to publish to, ORG/NAME.")
    ],
    private: Annotated[
        bool, typer.Option("--private", help="Create a new repo as private.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only write the repo folder (needs --out).")
    ] = False,
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder for --dry-run (new or empty).")
    ] = None,
    sample_rows: Annotated[
        int, typer.Option("--sample-rows", min=0, help="Rows per task in the sample Parquet.")
    ] = 20,
    license: Annotated[str, typer.Option("--license", help="Card license id.")] = "other",
    message: Annotated[
        str | None, typer.Option("--message", "-m", help="Commit message.", show_default=False)
    ] = None,
    endpoint: EndpointOption = None,
    token: TokenOption = None,
    as_json: JsonOption = False,
) -> None:
    """Publish task specs as a Hub dataset repo, in one commit.

    The repo gets the resolved specs (pure data, verifiers by name and version), a
    README card whose `configs` point at a small Parquet sample of each task, and
    videorl_kit_manifest.json with the sha256 of every file. Nothing executable is
    uploaded or accepted.

    Examples:

      videorl-kit publish task_specs/synth-count.yaml --repo my-org/video-tasks

      videorl-kit publish task_specs/ --repo my-org/video-tasks --dry-run --out /tmp/repo

      HF_ENDPOINT=http://127.0.0.1:8080 videorl-kit publish a.yaml -r org/tasks --json
    """
    from videorl_kit.hub.publish import publish

    if dry_run and out is None:
        raise UserError("--dry-run needs --out DIR (the folder to write the repo into)")
    if out is not None and not dry_run:
        raise UserError("--out is only used with --dry-run")
    paths = discover_spec_paths(list(specs))
    if not paths:
        raise UserError("no spec files given (base files starting with '_' are skipped)")
    result = publish(
        paths,
        repo,
        private=private,
        dry_run_dir=out,
        token=token,
        endpoint=endpoint,
        sample_limit=sample_rows,
        license=license,
        commit_message=message,
    )
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
        return
    table = Table("spec", "version", "verifier", "sample rows", "file")
    for spec in result.specs:
        verifier = f"{spec['verifier']['name']} v{spec['verifier']['version']}"
        rows = str(spec["sample_rows"])
        table.add_row(spec["id"], str(spec["version"]), verifier, rows, spec["path"])
    console = _out()
    console.print(table)
    if result.dry_run:
        console.print(
            f"wrote {len(result.files)} files to {result.folder} (dry run: no upload)", markup=False
        )
    elif result.created_commit:
        console.print(f"published {result.repo_id}@{result.revision}: {result.commit_url}")
    else:
        console.print(f"{result.repo_id} already up to date at {result.revision} (no new commit)")
    if result.deleted:
        console.print(f"removed from the previous publish: {', '.join(result.deleted)}")
    if not result.dry_run and result.specs:
        console.print(f"use it with: videorl-kit pull {result.repo_id}@{result.revision}")
    for warning in result.warnings:
        _err().print(Text.assemble(("warning:", "yellow"), f" {warning}"), highlight=False)


def pull_command(
    ref: Annotated[str, typer.Argument(help="ORG/NAME or ORG/NAME@REV (commit sha, branch, tag).")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Folder to place the files in (default: the Hub cache)."),
    ] = None,
    endpoint: EndpointOption = None,
    token: TokenOption = None,
    as_json: JsonOption = False,
) -> None:
    """Download a published spec repo at a revision, verify every file, load its specs.

    A branch or tag is resolved to its commit sha, which is printed and recorded on every
    spec. A file that is missing or differs from videorl_kit_manifest.json is an error
    naming the file. Nothing downloaded is executed.

    Examples:

      videorl-kit pull my-org/video-tasks@3f0c2a1e9d8b7c6a5f4e3d2c1b0a9f8e7d6c5b4a

      videorl-kit pull my-org/video-tasks --out specs/video-tasks --json
    """
    from videorl_kit.hub.pull import pull

    pulled = pull(ref, dest=out, token=token, endpoint=endpoint)
    if as_json:
        typer.echo(json.dumps(pulled.to_dict(), indent=2))
        return
    summary = pulled.to_dict()
    table = Table("spec", "version", "verifier", "path")
    for spec in summary["specs"]:
        verifier = f"{spec['verifier']['name']} v{spec['verifier']['version']}"
        table.add_row(spec["id"], str(spec["version"]), verifier, spec["path"])
    console = _out()
    console.print(table)
    console.print(
        f"pulled {pulled.repo}@{pulled.revision} into {pulled.local_dir}: "
        f"{len(summary['files'])} files match the manifest, {len(pulled.specs)} specs loaded"
    )
    for warning in pulled.warnings:
        _err().print(Text.assemble(("warning:", "yellow"), f" {warning}"), highlight=False)


def register(app: typer.Typer) -> None:
    """Add the Hub commands (``publish``, ``pull``) to the ``videorl-kit`` app.

    Example:
        >>> import typer
        >>> app = typer.Typer()
        >>> register(app)
        >>> sorted(c.name for c in app.registered_commands)
        ['publish', 'pull']
    """
    app.command("publish")(publish_command)
    app.command("pull")(pull_command)
