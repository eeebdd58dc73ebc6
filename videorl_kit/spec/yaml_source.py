"""YAML reading that keeps line numbers, resolves ``include:`` and cannot be made to blow up.

The loader returns plain data plus an *origin map* from field paths to ``(file, line)``, so
validation errors can point at the exact line even when the value came from an included
base file.

Everything it reads is bounded: each file is a regular file of at most
:data:`~videorl_kit.core.spec_files.MAX_SPEC_BYTES`, a spec and its includes read at most
:data:`MAX_TOTAL_BYTES` from at most :data:`MAX_INCLUDE_FILES` files, includes nest at most
:data:`MAX_INCLUDE_DEPTH` deep and mappings/lists at most :data:`MAX_DEPTH` deep (the YAML is
read from its event stream, without recursion). Tags other than plain data, aliases of
mappings or lists (the "billion laughs"), merge keys, duplicate keys and numbers that do
not fit 64 bits are errors. A local include stays inside the root of the file that writes it
(:mod:`videorl_kit.spec.paths`). Messages about an included file name its file, line and
field, never text from it (a key, a value or a YAML excerpt).

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
from videorl_kit.core.safe_text import has_lone_surrogate, one_line, quoted
from videorl_kit.core.spec_files import (
    MAX_SPEC_BYTES,
    SAFE_YAML_TAGS,
    UnreadableSpecFile,
    read_spec_file,
)
from videorl_kit.hf.refs import HF_SCHEME, format_hf_uri
from videorl_kit.hf.resolve import resolve_hf_uri
from videorl_kit.spec.paths import (
    ALLOW_ABSOLUTE_KEY,
    PathRefused,
    PathRoots,
    SpecRoot,
    find_spec_root,
    root_folders,
)

FieldPath = tuple[str | int, ...]
Origin = tuple[str, int]

#: Deepest nesting of mappings and lists in one file (real specs use 4).
MAX_DEPTH = 64
#: Longest chain of includes (a spec that includes a base that includes ... ).
MAX_INCLUDE_DEPTH = 16
#: Most files one spec reads, itself and every include counted each time it is read.
MAX_INCLUDE_FILES = 64
#: Most bytes one spec reads over itself and all its includes.
MAX_TOTAL_BYTES = 4 * MAX_SPEC_BYTES
#: Longest number written in a spec (longer ones are refused before they are converted).
MAX_NUMBER_CHARS = 64
#: Integers must fit in 64 bits.
MAX_INT = 2**63

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: 7x faster
_STR_TAG = "tag:yaml.org,2002:str"
_NUMBER_TAGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})
_COLLECTION_TAGS = {
    yaml.MappingStartEvent: "tag:yaml.org,2002:map",
    yaml.SequenceStartEvent: "tag:yaml.org,2002:seq",
}
_PLAIN_DATA = "specs are plain data; code is referenced by registered name"


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
    """Merged YAML data with the file and line each field came from.

    ``root`` is the folder the spec's paths must stay inside; ``file`` is the display name
    of the file the user named (the only file whose text messages may quote).
    """

    data: dict[str, Any]
    origins: dict[FieldPath, Origin]
    file: str
    root_path: Path
    root: SpecRoot
    hub_files: list[dict[str, str]] = field(default_factory=list)

    def origin(self, path: FieldPath) -> Origin:
        """Return ``(file, line)`` of the longest known prefix of ``path``."""
        for end in range(len(path), -1, -1):
            found = self.origins.get(tuple(path[:end]))
            if found is not None:
                return found
        return (self.file, 1)

    def quotes(self, file: str) -> bool:
        """Whether messages about ``file`` may quote its text (only the file the user named)."""
        return file == self.file


def _fail(file: str, line: int, path: str, message: str) -> SpecLoadError:
    """A :class:`SpecLoadError` holding one issue (raise the result)."""
    return SpecLoadError([SpecIssue(file, line, path, message)])


def _display(path: Path) -> str:
    try:
        shown = str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        shown = str(path)
    return one_line(shown)


def dotted(path: FieldPath) -> str:
    """A field path as ``a.b.0.c``, each part on one printable line.

    Example:
        >>> dotted(("budget", "video", "fps")), dotted(("a\\nb", 0))
        ('budget.video.fps', "'a\\\\nb'.0")
    """
    return ".".join(one_line(str(p)) if len(str(p)) <= 80 else quoted(p) for p in path)


class _Frame:
    """A mapping or list being built, with its field path and (for a mapping) pending key."""

    __slots__ = ("key", "path", "value")

    def __init__(self, value: dict | list, path: FieldPath) -> None:
        self.value = value
        self.path = path
        self.key: str | None = None


class _DataBuilder:
    """Builds plain data and origins from YAML events, without recursion."""

    def __init__(self, file: str, quote: bool) -> None:
        self.file = file
        self.quote = quote
        self.origins: dict[FieldPath, Origin] = {}
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[str, Any] | None] = {}  # None: a mapping or list
        self.documents = 0
        self.result: Any = None
        self.resolver = yaml.resolver.Resolver()
        self.constructor = yaml.constructor.SafeConstructor()

    def fail(self, line: int, path: FieldPath, message: str) -> SpecLoadError:
        return _fail(self.file, line, dotted(path) if self.quote or not path else "", message)

    def feed(self, event: yaml.Event) -> None:
        line = event.start_mark.line + 1
        kind = type(event)
        if kind is yaml.ScalarEvent:
            self._scalar(event, line)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            self._start(event, line)
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            self._attach(self.stack.pop().value)
        elif kind is yaml.AliasEvent:
            self._alias(event, line)
        elif kind is yaml.DocumentStartEvent:
            self.documents += 1
            if self.documents > 1:
                raise self.fail(line, (), "a spec file holds one YAML document (found '---')")

    def _expects_key(self) -> bool:
        return (
            bool(self.stack)
            and isinstance(self.stack[-1].value, dict)
            and (self.stack[-1].key is None)
        )

    def _child_path(self, line: int) -> FieldPath:
        if not self.stack:
            self.origins[()] = (self.file, line)
            return ()
        top = self.stack[-1]
        if isinstance(top.value, list):
            path = (*top.path, len(top.value))
            self.origins[path] = (self.file, line)
            return path
        assert top.key is not None
        return (*top.path, top.key)

    def _start(self, event: yaml.CollectionStartEvent, line: int) -> None:
        if self._expects_key():
            raise self.fail(line, self.stack[-1].path, "keys must be plain scalars")
        path = self._child_path(line)
        if event.tag not in (None, "!", _COLLECTION_TAGS[type(event)]):
            raise self.fail(line, path, self._tag_message(event.tag))  # !!set, !!omap, objects
        if len(self.stack) >= MAX_DEPTH:
            raise self.fail(line, path, f"mappings and lists nest deeper than {MAX_DEPTH} levels")
        if event.anchor is not None:
            self.anchors[event.anchor] = None
        self.stack.append(_Frame({} if isinstance(event, yaml.MappingStartEvent) else [], path))

    def _attach(self, value: Any) -> None:
        if not self.stack:
            self.result = value
            return
        top = self.stack[-1]
        if isinstance(top.value, list):
            top.value.append(value)
        else:
            assert top.key is not None
            top.value[top.key] = value
            top.key = None

    def _add_key(self, key: str, line: int) -> None:
        top = self.stack[-1]
        if key == "<<":
            raise self.fail(
                line, top.path, "YAML merge keys ('<<') are not supported; use include:"
            )
        if key in top.value:
            raise self.fail(line, (*top.path, key), "duplicate key")
        top.key = key
        self.origins[(*top.path, key)] = (self.file, line)

    def _scalar(self, event: yaml.ScalarEvent, line: int) -> None:
        is_key = self._expects_key()
        path = self.stack[-1].path if is_key else self._child_path(line)
        if is_key and event.anchor is None:  # keys stay text, as written
            self._check_tag(event.tag, line, path)
            value = event.value
            if has_lone_surrogate(value):
                raise self.fail(line, path, "not valid Unicode text (a lone surrogate)")
        else:
            value = self._value(event, line, path)
        if event.anchor is not None:
            self.anchors[event.anchor] = (event.value, value)
        if is_key:
            self._add_key(event.value, line)
        else:
            self._attach(value)

    def _check_tag(self, tag: str | None, line: int, path: FieldPath) -> None:
        if tag not in (None, "!") and tag not in SAFE_YAML_TAGS:
            raise self.fail(line, path, self._tag_message(tag))

    def _value(self, event: yaml.ScalarEvent, line: int, path: FieldPath) -> Any:
        """The plain-data value of a scalar (text, number, bool, null or date)."""
        self._check_tag(event.tag, line, path)
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolver.resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag == _STR_TAG:
            value: Any = event.value
        else:
            if tag in _NUMBER_TAGS and len(event.value) > MAX_NUMBER_CHARS:
                raise self.fail(line, path, f"number longer than {MAX_NUMBER_CHARS} characters")
            node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
            try:
                value = self.constructor.construct_object(node)
            except (yaml.YAMLError, ValueError, OverflowError, TypeError):
                raise self.fail(line, path, f"not a valid {tag.rsplit(':', 1)[-1]}") from None
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= MAX_INT:
                raise self.fail(line, path, "integer out of range (it must fit in 64 bits)")
        if isinstance(value, str) and has_lone_surrogate(value):
            raise self.fail(line, path, "not valid Unicode text (a lone surrogate)")
        return value

    def _alias(self, event: yaml.AliasEvent, line: int) -> None:
        where = self.stack[-1].path if self.stack else ()
        if event.anchor not in self.anchors:
            raise self.fail(line, where, "alias to an anchor that is not defined above it")
        anchored = self.anchors[event.anchor]
        if anchored is None:  # expanding these can blow up exponentially
            raise self.fail(
                line, where, "aliases of mappings or lists are not supported; use include:"
            )
        text, value = anchored
        if self._expects_key():
            self._add_key(text, line)
        else:
            self._child_path(line)
            self._attach(value)

    def _tag_message(self, tag: str | None) -> str:
        shown = f" {quoted(tag)}" if self.quote else ""
        return f"unsupported YAML tag{shown} ({_PLAIN_DATA})"


def parse_yaml_text(
    text: str, shown: str, *, quote: bool = True
) -> tuple[Any, dict[FieldPath, Origin]]:
    """Plain data and per-field origins of one YAML text (see the module docstring for limits).

    With ``quote=False`` (an included file) no message quotes the text.

    Example:
        >>> data, origins = parse_yaml_text("a: 1\\nb:\\n  c: x\\n", "a.yaml")
        >>> data, origins[("b", "c")]
        ({'a': 1, 'b': {'c': 'x'}}, ('a.yaml', 3))
    """
    builder = _DataBuilder(shown, quote)
    try:
        for event in yaml.parse(text, Loader=_LOADER):
            builder.feed(event)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        if quote:
            message = f"invalid YAML: {one_line(str(exc.problem or exc.context))}"
        else:
            message = f"invalid YAML at column {mark.column + 1 if mark is not None else 1}"
        raise _fail(shown, line, "", message) from None
    except yaml.YAMLError:
        raise _fail(shown, 1, "", "invalid YAML") from None
    if builder.result is None:  # an empty file or an empty document
        return {}, {(): (shown, 1)}
    return builder.result, builder.origins


def _by_first_key(origins: dict[FieldPath, Origin]) -> dict[Any, dict[FieldPath, Origin]]:
    groups: dict[Any, dict[FieldPath, Origin]] = {}
    for path, origin in origins.items():
        if path:
            groups.setdefault(path[0], {})[path[1:]] = origin
    return groups


def deep_merge(
    base: dict[str, Any],
    base_origins: dict[FieldPath, Origin],
    local: dict[str, Any],
    local_origins: dict[FieldPath, Origin],
) -> tuple[dict[str, Any], dict[FieldPath, Origin]]:
    """Merge ``local`` over ``base``: mappings merge recursively, anything else is replaced.

    Linear in the number of fields (a spec with 100,000 keys merges in well under a second).

    Example:
        >>> deep_merge({"a": {"x": 1, "y": 2}}, {}, {"a": {"y": 3}}, {})[0]
        {'a': {'x': 1, 'y': 3}}
    """
    merged = dict(base)
    base_groups = _by_first_key(base_origins)
    local_groups = _by_first_key(local_origins)
    groups = dict(base_groups)
    for key, value in local.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key], groups[key] = deep_merge(
                merged[key], base_groups.get(key, {}), value, local_groups.get(key, {})
            )
        else:
            merged[key] = value
            groups[key] = local_groups.get(key, {})
    origins = {(key, *sub): o for key, group in groups.items() for sub, o in group.items()}
    root = local_origins.get((), base_origins.get(()))
    if root is not None:
        origins[()] = root
    return merged, origins


HubResolver = Callable[[str], tuple[Path, dict[str, str]]]


def _default_hub_resolver(uri: str) -> tuple[Path, dict[str, str]]:
    resolved = resolve_hf_uri(uri)
    return Path(resolved.local_path), resolved.provenance()


@dataclass
class _ReadBudget:
    """Files and bytes a spec may still read through its includes."""

    files: int = MAX_INCLUDE_FILES
    bytes: int = MAX_TOTAL_BYTES

    def charge(self, text: str, shown: str) -> None:
        self.files -= 1
        self.bytes -= len(text.encode("utf-8"))
        if self.files < 0:
            raise _fail(shown, 1, "", f"a spec may read at most {MAX_INCLUDE_FILES} files")
        if self.bytes < 0:
            raise _fail(
                shown, 1, "", f"a spec and its includes may hold at most {MAX_TOTAL_BYTES} bytes"
            )


def load_yaml_with_includes(
    path: str | Path, hub_resolver: HubResolver | None = None
) -> YamlDocument:
    """Load ``path`` and everything it includes, local keys winning over included ones.

    ``include:`` takes a path (relative to the including file, inside that file's root), an
    ``hf://ORG/NAME@REV/file`` URI, or a list of them (later entries win over earlier ones).
    A cycle is an error that prints the whole cycle. Raises :class:`SpecLoadError` with
    every problem found.
    """
    resolver = hub_resolver or _default_hub_resolver
    hub_files: list[dict[str, str]] = []
    pinned: dict[str, str] = {}  # hf:// URI as written -> the same file at the resolved commit
    budget = _ReadBudget()

    def fetch(uri: str) -> Path:
        local, record = resolver(uri)
        hub_files.append(record)
        pinned[uri] = format_hf_uri(record["repo"], record["revision"], record["path"])
        return local

    def identity(file: Path, shown: str) -> str:
        return shown if shown.startswith(HF_SCHEME) else str(file.resolve())

    def load(file: Path, shown: str, stack: tuple[str, ...]) -> tuple[dict, dict]:
        key = identity(file, shown)
        quote = shown == root_shown
        try:
            text = read_spec_file(file)
        except UnreadableSpecFile as exc:
            raise _fail(shown, 1, "", str(exc)) from None
        budget.charge(text, shown)
        data, origins = parse_yaml_text(text, shown, quote=quote)
        if not isinstance(data, dict):
            raise _fail(shown, 1, "", "a spec must be a YAML mapping")
        includes = data.pop("include", None)
        if includes is None:
            return data, origins
        include_line = origins.get(("include",), (shown, 1))[1]
        # the file you named may include by absolute path if it allows absolute paths itself
        section = data.get("data")
        absolute = quote and isinstance(section, dict) and section.get(ALLOW_ABSOLUTE_KEY) is True
        entries = includes if isinstance(includes, list) else [includes]
        if len(stack) + 1 >= MAX_INCLUDE_DEPTH:
            raise _fail(
                shown,
                include_line,
                "include",
                f"includes nest deeper than {MAX_INCLUDE_DEPTH} files",
            )
        merged: dict[str, Any] = {}
        merged_origins: dict[FieldPath, Origin] = {}
        for entry in entries:
            if not isinstance(entry, str) or not entry.strip():
                raise _fail(
                    shown, include_line, "include", "include must be a file path or a list of paths"
                )
            child_file, child_shown = _locate(entry, file, shown, include_line, quote, absolute)
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

    def _locate(
        entry: str, file: Path, shown: str, line: int, quote: bool, absolute: bool
    ) -> tuple[Path, str]:
        named = f" {one_line(entry)}" if quote else ""
        if entry.startswith(HF_SCHEME):
            try:
                return fetch(entry), entry
            except Exception as exc:  # network, auth, missing file: report at the include line
                detail = one_line(str(exc)) if quote else type(exc).__name__
                raise _fail(shown, line, "include", f"cannot fetch{named}: {detail}") from None
        if shown.startswith(HF_SCHEME):
            # a relative include inside a Hub file stays within the same repo and commit
            uri = f"{pinned[shown].rsplit('/', 1)[0]}/{entry}"
            return _locate(uri, file, shown, line, quote, absolute)
        try:
            writer_root = find_spec_root(file)  # an include stays in its own writer's root
            allowed = absolute and not writer_root.from_hub
            roots = PathRoots(root_folders(writer_root), allow_absolute=allowed)
            child = roots.resolve(entry, base=file.parent, field="include")
        except PathRefused as exc:
            what = (
                f"{quoted(exc.written)} {exc.reason}"
                if quote
                else f"the included file {exc.reason}"
            )
            raise _fail(shown, line, "include", what) from None
        if not child.exists():
            raise _fail(
                shown,
                line,
                "include",
                f"included file not found:{named} (looked in {_display(file.parent)})",
            )
        return child, _display(child)

    if str(path).startswith(HF_SCHEME):
        root_shown = str(path)
        try:
            root_file = fetch(root_shown)
        except Exception as exc:  # network, auth, missing file
            raise _fail(
                root_shown, 1, "", f"cannot fetch {root_shown}: {one_line(str(exc))}"
            ) from None
    else:
        root_file = Path(path)
        root_shown = _display(root_file)
    root = find_spec_root(root_file)
    data, origins = load(root_file, root_shown, ())
    return YamlDocument(
        data, origins, file=root_shown, root_path=root_file, root=root, hub_files=hub_files
    )


def _short(name: str) -> str:
    if name.startswith(HF_SCHEME):
        return name
    return _display(Path(name))
