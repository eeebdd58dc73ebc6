"""YAML reading that keeps line numbers and resolves ``include:``.

The loader returns plain data plus an *origin map* from field paths to
``(file, line)``, so validation errors can point at the exact line even when the
value came from an included base file.

Example:
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "base.yaml").write_text("version: 1\\nbudget: {video: {fps: 2.0}}\\n")
    >>> _ = (d / "task.yaml").write_text("include: base.yaml\\nid: demo\\nversion: 3\\n")
    >>> doc = load_yaml_with_includes(d / "task.yaml")
    >>> doc.data["version"], doc.data["budget"]["video"]["fps"]
    (3, 2.0)
    >>> doc.origin(("budget", "video", "fps"))[1]
    2
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from videorl_kit.core.errors import VideoRLKitError
from videorl_kit.hf.refs import HF_SCHEME, format_hf_uri
from videorl_kit.hf.resolve import resolve_hf_uri

FieldPath = tuple[str | int, ...]
Origin = tuple[str, int]

#: Scheme prefix for includes that come from the Hugging Face Hub.


@dataclass
class SpecIssue:
    """One problem found in a spec: where it is and what is wrong."""

    file: str
    line: int
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return f"{self.file}:{self.line}: {where}{self.message}"


class SpecLoadError(VideoRLKitError):
    """Raised when YAML cannot be read or includes cannot be resolved."""

    def __init__(self, issues: list[SpecIssue]):
        self.issues = issues
        super().__init__("\n".join(str(i) for i in issues))


@dataclass
class YamlDocument:
    """Merged YAML data with the file and line each field came from."""

    data: dict[str, Any]
    origins: dict[FieldPath, Origin]
    file: str
    root_path: Path
    hub_files: list[dict[str, str]] = field(default_factory=list)

    def origin(self, path: FieldPath) -> Origin:
        """Return ``(file, line)`` of the longest known prefix of ``path``."""
        for end in range(len(path), -1, -1):
            found = self.origins.get(tuple(path[:end]))
            if found is not None:
                return found
        return (self.file, 1)


def _fail(file: str, line: int, path: str, message: str) -> SpecLoadError:
    """A :class:`SpecLoadError` holding one issue (raise the result)."""
    return SpecLoadError([SpecIssue(file, line, path, message)])


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


class _UniqueKeyLoader(yaml.SafeLoader):
    """Safe loader (no Python tags, nothing executable)."""


_COLLECTION_TAGS = {
    yaml.MappingNode: "tag:yaml.org,2002:map",
    yaml.SequenceNode: "tag:yaml.org,2002:seq",
}


def _to_python(
    node: yaml.Node, file: str, prefix: FieldPath, origins: dict, seen: set[int] | None = None
) -> Any:
    origins[prefix] = (file, node.start_mark.line + 1)
    expected_tag = _COLLECTION_TAGS.get(type(node))
    seen = set() if seen is None else seen
    if expected_tag is not None:
        if id(node) in seen:  # an alias: expanding them can blow up exponentially
            raise _fail(
                file,
                node.start_mark.line + 1,
                _dotted(prefix),
                "YAML aliases are not supported; use include:",
            )
        seen.add(id(node))
    if expected_tag is not None and node.tag != expected_tag:
        raise _fail(
            file,
            node.start_mark.line + 1,
            _dotted(prefix),
            f"unsupported YAML value: tag {node.tag!r}",
        )
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise _fail(
                    file,
                    key_node.start_mark.line + 1,
                    _dotted(prefix),
                    "keys must be plain scalars",
                )
            key = _UniqueKeyLoader("").construct_scalar(key_node)
            if key == "<<":
                raise _fail(
                    file,
                    key_node.start_mark.line + 1,
                    _dotted(prefix),
                    "YAML merge keys ('<<') are not supported; use include:",
                )
            if key in result:
                raise _fail(
                    file, key_node.start_mark.line + 1, _dotted((*prefix, key)), "duplicate key"
                )
            child = (*prefix, key)
            origins[child] = (file, key_node.start_mark.line + 1)
            result[key] = _to_python(value_node, file, child, origins, seen)
            origins[child] = (file, key_node.start_mark.line + 1)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [
            _to_python(item, file, (*prefix, i), origins, seen) for i, item in enumerate(node.value)
        ]
    loader = _UniqueKeyLoader("")
    return loader.construct_object(node, deep=True)


def _dotted(path: FieldPath) -> str:
    return ".".join(str(p) for p in path)


def read_yaml(path: Path, display: str | None = None) -> tuple[Any, dict[FieldPath, Origin]]:
    """Parse one YAML file safely, returning its data and per-field line numbers.

    Example:
        >>> import pathlib, tempfile
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.yaml"
        >>> _ = p.write_text("a: 1\\nb:\\n  c: x\\n")
        >>> data, origins = read_yaml(p, "a.yaml")
        >>> data, origins[("b", "c")]
        ({'a': 1, 'b': {'c': 'x'}}, ('a.yaml', 3))
    """
    shown = display or _display(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _fail(shown, 1, "", "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(shown, 1, "", f"cannot read file: {exc}") from None
    try:
        node = yaml.compose(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc)
        raise _fail(shown, line, "", f"invalid YAML: {problem}") from None
    origins: dict[FieldPath, Origin] = {}
    if node is None:
        return {}, {(): (shown, 1)}
    try:
        data = _to_python(node, shown, (), origins)
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise _fail(shown, line, "", f"unsupported YAML value: {exc.problem}") from None
    return data, origins


def deep_merge(
    base: dict[str, Any],
    base_origins: dict[FieldPath, Origin],
    local: dict[str, Any],
    local_origins: dict[FieldPath, Origin],
) -> tuple[dict[str, Any], dict[FieldPath, Origin]]:
    """Merge ``local`` over ``base``: mappings merge recursively, anything else is replaced.

    Example:
        >>> deep_merge({"a": {"x": 1, "y": 2}}, {}, {"a": {"y": 3}}, {})[0]
        {'a': {'x': 1, 'y': 3}}
    """
    merged = dict(base)
    origins = dict(base_origins)
    for key, value in local.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            sub_base = {p[1:]: o for p, o in origins.items() if p[:1] == (key,)}
            sub_local = {p[1:]: o for p, o in local_origins.items() if p[:1] == (key,)}
            merged[key], sub = deep_merge(merged[key], sub_base, value, sub_local)
            origins = {p: o for p, o in origins.items() if p[:1] != (key,)}
            origins.update({(key, *p): o for p, o in sub.items()})
        else:
            merged[key] = value
            origins = {p: o for p, o in origins.items() if p[:1] != (key,)}
            origins.update({p: o for p, o in local_origins.items() if p[:1] == (key,)})
    if () in local_origins:
        origins[()] = local_origins[()]
    return merged, origins


HubResolver = Callable[[str], tuple[Path, dict[str, str]]]


def _default_hub_resolver(uri: str) -> tuple[Path, dict[str, str]]:
    resolved = resolve_hf_uri(uri)
    return Path(resolved.local_path), resolved.provenance()


def load_yaml_with_includes(
    path: str | Path, hub_resolver: HubResolver | None = None
) -> YamlDocument:
    """Load ``path`` and everything it includes, local keys winning over included ones.

    ``include:`` takes a path (relative to the including file), an ``hf://ORG/NAME@REV/file``
    URI, or a list of them (later entries win over earlier ones). A cycle is an error that
    prints the whole cycle. Raises :class:`SpecLoadError` with every problem found.
    """
    resolver = hub_resolver or _default_hub_resolver
    hub_files: list[dict[str, str]] = []
    pinned: dict[str, str] = {}  # hf:// URI as written -> the same file at the resolved commit

    def fetch(uri: str) -> Path:
        local, record = resolver(uri)
        hub_files.append(record)
        pinned[uri] = format_hf_uri(record["repo"], record["revision"], record["path"])
        return local

    def identity(file: Path, shown: str) -> str:
        return shown if shown.startswith(HF_SCHEME) else str(file.resolve())

    def load(file: Path, shown: str, stack: tuple[str, ...]) -> tuple[dict, dict]:
        key = identity(file, shown)
        data, origins = read_yaml(file, shown)
        if not isinstance(data, dict):
            raise _fail(shown, 1, "", "a spec must be a YAML mapping")
        includes = data.pop("include", None)
        if includes is None:
            return data, origins
        include_line = origins.get(("include",), (shown, 1))[1]
        entries = includes if isinstance(includes, list) else [includes]
        merged: dict[str, Any] = {}
        merged_origins: dict[FieldPath, Origin] = {}
        for entry in entries:
            if not isinstance(entry, str) or not entry.strip():
                raise _fail(
                    shown, include_line, "include", "include must be a file path or a list of paths"
                )
            child_file, child_shown = _locate(entry, file, shown, include_line)
            chain = (*stack, key)
            child_key = identity(child_file, child_shown)
            if child_key in chain:
                names = [*chain[chain.index(child_key) :], child_key]
                pretty = " -> ".join(_short(n) for n in names)
                raise _fail(shown, include_line, "include", f"include cycle: {pretty}")
            child, child_origins = load(child_file, child_shown, chain)
            merged, merged_origins = deep_merge(merged, merged_origins, child, child_origins)
        local_origins = {p: o for p, o in origins.items() if p[:1] != ("include",)}
        return deep_merge(merged, merged_origins, data, local_origins)

    def _locate(entry: str, file: Path, shown: str, line: int) -> tuple[Path, str]:
        if entry.startswith(HF_SCHEME):
            try:
                return fetch(entry), entry
            except Exception as exc:  # network, auth, missing file: report at the include line
                raise _fail(shown, line, "include", f"cannot fetch {entry}: {exc}") from None
        if shown.startswith(HF_SCHEME):
            # a relative include inside a Hub file stays within the same repo and commit
            return _locate(f"{pinned[shown].rsplit('/', 1)[0]}/{entry}", file, shown, line)
        child = Path(entry) if Path(entry).is_absolute() else file.parent / entry
        if not child.exists():
            raise _fail(
                shown, line, "include", f"included file not found: {entry} (looked for {child})"
            )
        return child, _display(child)

    if str(path).startswith(HF_SCHEME):
        root_shown = str(path)
        try:
            root = fetch(root_shown)
        except Exception as exc:  # network, auth, missing file
            raise _fail(root_shown, 1, "", f"cannot fetch {root_shown}: {exc}") from None
    else:
        root = Path(path)
        root_shown = _display(root)
    data, origins = load(root, root_shown, ())
    return YamlDocument(data, origins, file=root_shown, root_path=root, hub_files=hub_files)


def _short(name: str) -> str:
    if name.startswith(HF_SCHEME):
        return name
    return _display(Path(name))
