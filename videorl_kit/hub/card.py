"""The README.md dataset card of a spec repo: YAML front matter plus a short Markdown body.

The front matter follows the Hub's dataset-card conventions: ``configs`` (one per spec,
``config_name`` always set, pointing at the sample manifest), ``license``, ``tags``,
``source_datasets``, and a ``videorl_kit`` block with spec and verifier versions and each
data source with its pinned revision. Every value in the Markdown body goes through
:func:`~videorl_kit.core.safe_text.markdown_text` (a local data path is any text); the front
matter is written by the YAML dumper.

Example:
    >>> from videorl_kit.hf.manifest import SpecEntry
    >>> entry = SpecEntry(id="synth-count", version=1, problem_type="numerical",
    ...     verifier={"name": "numeric", "version": 1}, spec_path="specs/synth-count.yaml",
    ...     sample_path="data/synth-count/sample.parquet", sample_rows=2,
    ...     data_source={"path": "count.jsonl"})
    >>> text = build_card("org/tasks", [entry], kit_version="0.1.0", license="apache-2.0")
    >>> meta = parse_front_matter(text)
    >>> meta["configs"][0]["config_name"], meta["configs"][0]["data_files"][0]["split"]
    ('synth-count', 'sample')
"""

from __future__ import annotations

from typing import Any

import yaml

from videorl_kit.core.safe_text import markdown_code, markdown_text
from videorl_kit.hf.errors import HubError
from videorl_kit.hf.manifest import MANIFEST_FORMAT_VERSION, MANIFEST_NAME, SpecEntry

#: The split name of every sample config (the full data is never uploaded).
SAMPLE_SPLIT = "sample"
BASE_TAGS = ("videorl-kit", "task-spec", "rlvr", "video")


class _PlainDumper(yaml.SafeDumper):
    """Safe dumper that never writes anchors/aliases (published YAML stays alias-free)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    # multi-line text (prompt templates) reads best as a literal block; PyYAML falls back
    # to a quoted scalar by itself when a block cannot represent the string exactly
    style = "|" if "\n" in value.strip("\n") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_PlainDumper.add_representer(str, _represent_str)

_LINE_BREAKS = ("\n", "\r", "\x85", "\u2028", "\u2029")


class _FrontMatterDumper(_PlainDumper):
    """The card's front matter: text with a line break is double-quoted (``\\n``), so no
    value can write a line of its own, such as the ``---`` that ends the front matter."""


def _represent_one_line(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = '"' if any(mark in value for mark in _LINE_BREAKS) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_FrontMatterDumper.add_representer(str, _represent_one_line)


def dump_yaml(data: Any, *, one_line_strings: bool = False) -> str:
    """Dump plain data as block-style YAML, keys in insertion order, no aliases.

    ``one_line_strings``: every string on its own line (a card's front matter), else
    multi-line text as a literal block.

    Example:
        >>> print(dump_yaml({"b": 1, "a": [1, 2]}), end="")
        b: 1
        a:
        - 1
        - 2
        >>> print(dump_yaml({"tag": "x\\n---"}, one_line_strings=True), end="")
        tag: "x\\n---"
    """
    dumper = _FrontMatterDumper if one_line_strings else _PlainDumper
    return yaml.dump(
        data, Dumper=dumper, sort_keys=False, allow_unicode=True, default_flow_style=False
    )


def card_metadata(
    repo_id: str, entries: list[SpecEntry], *, kit_version: str, license: str
) -> dict[str, Any]:
    """The card's front matter as a dict (see the module docstring for the layout).

    Example:
        >>> card_metadata("o/n", [], kit_version="0.1.0", license="mit")["license"]
        'mit'
    """
    tags = list(BASE_TAGS)
    for entry in entries:
        for tag in (entry.problem_type.replace("_", "-"), *entry.tags):
            if tag not in tags:
                tags.append(tag)
    sources = sorted({e.data_source["repo"] for e in entries if "repo" in e.data_source})
    configs = [
        {
            "config_name": entry.id,
            "data_files": [{"split": SAMPLE_SPLIT, "path": entry.sample_path}],
            **({"default": True} if index == 0 else {}),
        }
        for index, entry in enumerate(entries)
    ]
    meta: dict[str, Any] = {
        "pretty_name": f"videorl-kit task specs: {repo_id}",
        "license": license,
        "tags": tags,
    }
    if sources:
        meta["source_datasets"] = sources
    meta["configs"] = configs
    meta["videorl_kit"] = {
        "kit_version": kit_version,
        "format_version": MANIFEST_FORMAT_VERSION,
        "manifest": MANIFEST_NAME,
        "specs": [
            {
                "id": e.id,
                "version": e.version,
                "problem_type": e.problem_type,
                "verifier": {"name": e.verifier.get("name"), "version": e.verifier.get("version")},
                "spec": e.spec_path,
                "sample": e.sample_path,
                "sample_rows": e.sample_rows,
                "source": e.data_source,
            }
            for e in entries
        ],
    }
    return meta


def _source_text(source: dict[str, Any]) -> str:
    """The data source as Markdown: every value escaped (a local path is any text)."""
    if "repo" in source:
        repo, revision = markdown_code(source["repo"]), markdown_code(source.get("revision"))
        return f"{repo} @ {revision} ({markdown_code(source.get('file'))})"
    return f"local file {markdown_code(source.get('path'))} (not uploaded)"


def build_card(repo_id: str, entries: list[SpecEntry], *, kit_version: str, license: str) -> str:
    """The full README.md text: front matter, a table of specs and how to use them.

    Example:
        >>> build_card("o/n", [], kit_version="0.1.0", license="mit").startswith("---\\n")
        True
    """
    meta = card_metadata(repo_id, entries, kit_version=kit_version, license=license)
    rows = "\n".join(
        f"| {markdown_code(e.id)} | {e.version} | {markdown_text(e.problem_type)} | "
        f"{markdown_code(e.verifier.get('name'))} v{markdown_text(e.verifier.get('version'))} | "
        f"{_source_text(e.data_source)} | {e.sample_rows} |"
        for e in entries
    )
    first = entries[0].id if entries else "SPEC-ID"
    body = f"""
# {markdown_text(repo_id)}

Task specs for videorl-kit (RL with verifiable rewards on video understanding),
published with `videorl-kit publish` (kit {kit_version}).

Each spec in `specs/` is the fully resolved YAML (includes merged, defaults filled in). It is
pure data: verifiers are referenced by registered name and version, and nothing in this repo
is ever executed. `data/<spec-id>/sample.parquet` holds the first rows of each task's data
(media paths only, no media) so the dataset viewer and `datasets` can show them; the full
data stays at its source. Sample columns: `sample_id`, `row_index`, `question`, `answer`
(JSON text), `options`, `videos` and `images` (paths relative to the task's media root),
`problem_type`. `{MANIFEST_NAME}` lists the sha256 of every file and
`videorl-kit pull` checks each one.

| spec | version | problem type | verifier | data source | sample rows |
|---|---|---|---|---|---|
{rows}

## Use

Pin a commit sha (see this repo's history) so every run uses the same specs:

```bash
videorl-kit pull {repo_id}@COMMIT_SHA --out specs-{first}
videorl-kit validate hf://{repo_id}@COMMIT_SHA/specs/{first}.yaml
```

```python
from datasets import load_dataset

sample = load_dataset("{repo_id}", "{first}", split="{SAMPLE_SPLIT}", revision="COMMIT_SHA")
```
"""
    return f"---\n{dump_yaml(meta, one_line_strings=True)}---\n{body}"


def parse_front_matter(text: str) -> dict[str, Any]:
    """The YAML front matter of a card (between the first two ``---`` lines; the closing
    one unindented, as the Hub reads it).

    Example:
        >>> parse_front_matter("---\\nlicense: mit\\n---\\n# Title\\n")
        {'license': 'mit'}
    """
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise HubError("README.md: no YAML front matter (expected a first line '---')")
    try:
        end = next(i for i, line in enumerate(lines[1:], start=1) if line.rstrip() == "---")
    except StopIteration:
        raise HubError("README.md: YAML front matter is not closed by a '---' line") from None
    data = yaml.safe_load("\n".join(lines[1:end]))
    if not isinstance(data, dict):
        raise HubError("README.md: YAML front matter is not a mapping")
    return data
