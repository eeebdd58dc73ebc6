"""Spec commands: ``validate``, ``ls``, ``show``, ``budget``."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.table import Table
from rich.text import Text

from videorl_kit.core.errors import UserError
from videorl_kit.core.safe_text import terminal_text
from videorl_kit.core.terminal import TerminalConsole, echo
from videorl_kit.spec.budget import estimate_image, estimate_video
from videorl_kit.spec.check_data import check_data
from videorl_kit.spec.data import iter_samples
from videorl_kit.spec.loader import SpecError, discover_spec_paths, load_spec
from videorl_kit.spec.models import TaskSpec
from videorl_kit.spec.prompt import render_prompt

JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def _console() -> TerminalConsole:
    return TerminalConsole(soft_wrap=True, markup=False)


DocumentKind = tuple[
    Callable[[str | Path], bool], Callable[[str | Path], str | tuple[str, list[str]]]
]
"""Another YAML document ``validate`` accepts: ``(is_kind(path), load(path) -> id)``.

``load`` raises :class:`SpecError` listing every problem; it may return ``(id, notes)``, notes
being lines ``validate`` prints under the file (what it checked, counts). The CLI passes
training recipes (``videorl_kit.train``) this way, so this layer never imports the layers
above it.
"""


def make_validate(other_kinds: Sequence[DocumentKind] = ()) -> Callable[..., None]:
    """The ``validate`` command, also accepting the ``other_kinds`` of documents."""

    def validate(
        specs: Annotated[
            list[str], typer.Argument(help="Spec or recipe files, folders or hf:// URIs.")
        ],
        data: Annotated[
            bool,
            typer.Option(
                "--data",
                help="Also open each spec's data: rows parse and are usable, mapped columns "
                "exist, media files exist under media_root.",
            ),
        ] = False,
        as_json: JsonOption = False,
    ) -> None:
        """Validate specs and recipes; print one `file:line: field.path: message` per problem.

        Every problem in every file is reported at once (a recipe's own and those of every
        spec it names), then a summary line (all on stdout). A file is a recipe when its top
        level says `kind: recipe` or has a `tasks` or `algorithm` key. Files whose name
        starts with `_` are include-only bases and are skipped. With --data, each spec's data
        are opened too: a row problem is `data-file:line: rule: message` (`data-file:row N`
        for JSON and Parquet), and missing media are counted with the first few named. Exit
        status 0 when everything is valid, 1 otherwise.

        Examples:

          videorl-kit validate task_specs/*.yaml

          videorl-kit validate task_specs/ --data

          videorl-kit validate task_specs/ recipes/ --json
        """

        paths = discover_spec_paths(list(specs))
        if not paths:
            raise UserError("no spec files given (base files starting with '_' are skipped)")
        results = []
        for path in paths:
            other = next((load for is_kind, load in other_kinds if is_kind(path)), None)
            try:
                if other is not None:
                    found = other(path)
                    document_id, notes = found if isinstance(found, tuple) else (found, [])
                    results.append({"file": str(path), "id": document_id, "ok": True,
                                    "issues": [], "notes": notes})  # fmt: skip
                    continue
                spec = load_spec(path, check_first_row=True)
            except SpecError as exc:
                issues = [vars(i) | {"text": str(i)} for i in exc.issues]
                results.append({"file": str(path), "id": None, "ok": False, "issues": issues})
                continue
            result: dict[str, Any] = {"file": str(path), "id": spec.id, "ok": True, "issues": []}
            if data:
                report = check_data(spec)
                result["data"] = report.as_dict()
                result["ok"] = report.ok
            results.append(result)
        n_bad = sum(not r["ok"] for r in results)
        if as_json:
            payload = {"n_specs": len(results), "n_invalid": n_bad, "specs": results}
            typer.echo(json.dumps(payload, indent=2))
        else:
            for result in results:
                for issue in result["issues"]:
                    echo(issue["text"])
                for note in result.get("notes", []):
                    echo(f"{result['file']}: {note}")
                for line in result.get("data", {}).get("issues", []):
                    echo(line)
            checked = " (with their data)" if data else ""
            summary = f"{len(results) - n_bad} of {len(results)} specs valid{checked}"
            typer.secho(summary, fg=typer.colors.GREEN if not n_bad else typer.colors.RED)
        if n_bad:
            raise typer.Exit(1)

    return validate


def list_specs(
    folder: Annotated[Path, typer.Argument(help="Folder to search for *.yaml specs.")] = Path(
        "task_specs"
    ),
    as_json: JsonOption = False,
) -> None:
    """List the task specs in a folder; broken specs are listed with their first problem.

    Examples:

      videorl-kit ls

      videorl-kit ls task_specs/eval --json
    """
    if not folder.is_dir():
        raise UserError(f"{folder}: not a folder")
    rows = []
    for path in discover_spec_paths([folder]):
        try:
            spec = load_spec(path)
            rows.append({
                "file": str(path), "id": spec.id, "version": spec.version,
                "problem_type": str(spec.problem_type), "verifier": _verifier_label(spec),
                "ok": True, "problem": None,
            })  # fmt: skip
        except SpecError as exc:
            rows.append({
                "file": str(path), "id": None, "version": None, "problem_type": None,
                "verifier": None, "ok": False, "problem": str(exc.issues[0]),
            })  # fmt: skip
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("id", "version", "problem type", "verifier", "file")
    for row in rows:
        if row["ok"]:
            table.add_row(
                row["id"], str(row["version"]), row["problem_type"], row["verifier"], row["file"]
            )
        else:
            table.add_row(Text("INVALID", style="red"), "", "", "", row["problem"])
    _console().print(table)


def _verifier_label(spec: TaskSpec) -> str:
    """``name@version`` of the spec's verifier; per-row specs list their overrides.

    Example:
        >>> spec = TaskSpec.model_validate({"id": "t", "version": 1, "problem_type": "from_row",
        ...     "data": {"path": "d.jsonl"}, "prompt": {"template": "{{ question }}"},
        ...     "verifiers": {"numerical": {"name": "numeric", "version": 2}}})
        >>> _verifier_label(spec)
        'per row (numerical: numeric@2; others: default)'
    """
    if spec.verifier is not None:
        return f"{spec.verifier.name}@{spec.verifier.version}"
    chosen = [f"{ptype}: {ref.name}@{ref.version}" for ptype, ref in spec.verifiers.items()]
    return f"per row ({'; '.join([*chosen, 'others: default'])})"


def show(
    spec_path: Annotated[str, typer.Argument(metavar="SPEC", help="Spec file or hf:// URI.")],
    sample: Annotated[
        int, typer.Option("--sample", "-n", help="Row index (from 0) whose prompt to render.")
    ] = 0,
    as_json: JsonOption = False,
) -> None:
    """Show a resolved spec (includes merged, defaults filled) and one rendered prompt.

    Examples:

      videorl-kit show task_specs/synth-count.yaml

      videorl-kit show task_specs/synth-count.yaml --sample 3
    """

    spec = load_spec(spec_path)
    chosen = None
    for row in iter_samples(spec):
        if row.row_index == sample:
            chosen = row
            break
    if chosen is None:
        raise UserError(f"{spec_path}: no row {sample} in the data of task {spec.id!r}")
    if chosen.skip_reason:
        raise UserError(f"{spec_path}: {chosen.skip_reason}")
    prompt = render_prompt(spec, chosen)
    if as_json:
        payload = {
            "spec": spec.resolved_dict(),
            "provenance": spec.provenance,
            "sample": {
                "sample_id": chosen.sample_id, "question": chosen.question, "answer": chosen.answer,
                "options": chosen.options, "videos": [str(v) for v in chosen.videos],
                "images": [str(i) for i in chosen.images],
            },
            "prompt": prompt,
        }  # fmt: skip
        typer.echo(json.dumps(payload, indent=2))
        return
    console = _console()
    console.rule(Text.assemble((spec.id, "bold"), f" v{spec.version}"))
    console.print(
        yaml.safe_dump(spec.resolved_dict(), sort_keys=False), markup=False, highlight=False
    )
    console.rule(terminal_text(f"sample {chosen.sample_id}"))
    media = [*map(str, chosen.videos), *map(str, chosen.images)]
    console.print(terminal_text(f"media: {', '.join(media) or '(none)'}"), markup=False)
    console.print(terminal_text(f"answer: {chosen.answer}"), markup=False)
    console.rule("prompt")
    console.print(terminal_text(prompt), markup=False, highlight=False)


def _parse_size(size: str) -> tuple[int, int]:
    try:
        width, height = (int(part) for part in size.lower().split("x"))
    except ValueError:
        raise UserError(f"--size must look like 1280x720, got {size!r}") from None
    if width <= 0 or height <= 0:
        raise UserError(f"--size must be positive, got {size!r}")
    return width, height


def budget(
    spec_path: Annotated[str, typer.Argument(metavar="SPEC", help="Spec file or hf:// URI.")],
    duration: Annotated[
        list[float] | None, typer.Option("--duration", help="Video length in seconds (repeatable).")
    ] = None,
    size: Annotated[str, typer.Option("--size", help="Source frame size WxH.")] = "1280x720",
    source_fps: Annotated[float, typer.Option("--source-fps", help="Source frame rate.")] = 30.0,
    as_json: JsonOption = False,
) -> None:
    """Frames, tokens per frame and total visual tokens under a spec's budget.

    Same arithmetic as the Qwen2.5-VL (patch 28) and Qwen3-VL (patch 32) processors.
    Without --duration, a 10 s, 60 s and 10 min video are shown.

    Examples:

      videorl-kit budget task_specs/synth-count.yaml

      videorl-kit budget task_specs/synth-count.yaml --duration 120 --size 1920x1080 --json
    """

    spec = load_spec(spec_path)
    width, height = _parse_size(size)
    durations = duration or [10.0, 60.0, 600.0]
    if any(d <= 0 for d in durations):
        raise UserError("--duration must be positive")
    try:
        videos = [
            estimate_video(
                spec.budget.video, duration_s=d, width=width, height=height, source_fps=source_fps
            )
            for d in durations
        ]
        image = estimate_image(spec.budget.image, width=width, height=height)
    except ValueError as exc:
        raise UserError(f"{spec_path}: {exc}") from None
    if as_json:
        payload = {
            "spec": spec.id,
            "budget": spec.budget.model_dump(mode="json"),
            "videos": [v.as_dict() for v in videos],
            "image": image.as_dict(),
        }
        typer.echo(json.dumps(payload, indent=2))
        return
    title = f"{spec.id}: {width}x{height} @ {source_fps:g} fps, patch {spec.budget.video.patch}"
    table = Table(
        "duration s", "frames", "frame size", "tokens/frame", "visual tokens", title=title
    )
    for v in videos:
        size_text = f"{v.width}x{v.height}"
        per_frame = f"{v.tokens_per_frame:g}"
        table.add_row(f"{v.duration_s:g}", str(v.frames), size_text, per_frame, str(v.total_tokens))
    console = _console()
    console.print(table)
    resized = f"{image.width}x{image.height}"
    console.print(f"image {width}x{height} -> {resized}, {image.total_tokens} visual tokens")


def register(app: typer.Typer, other_kinds: Sequence[DocumentKind] = ()) -> None:
    """Add the spec commands to the ``videorl-kit`` app; ``validate`` also reads ``other_kinds``."""
    app.command("validate")(make_validate(other_kinds))
    app.command("ls")(list_specs)
    app.command("show")(show)
    app.command("budget")(budget)
