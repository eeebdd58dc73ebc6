"""Load and validate a task spec, reporting every problem at once.

Each problem is one line ``file:line: field.path: message``, with "did you mean"
suggestions for misspelled keys, problem types and verifier names.

Example:
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.yaml"
    >>> _ = p.write_text("id: t\\nversion: 1\\nproblem_type: ocr\\nfsp: 2\\n"
    ...                  "data: {path: rows.jsonl}\\nprompt: {template: '{{ question }}'}\\n")
    >>> try:
    ...     load_spec(p)
    ... except SpecError as err:
    ...     print(err.issues[0].line, err.issues[0].path, err.issues[0].message[:17])
    4 fsp unknown key 'fsp'
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from videorl_kit.core.errors import UserError
from videorl_kit.core.problem_types import (
    ProblemType,
    canonical_problem_type,
    unknown_problem_type_message,
)
from videorl_kit.core.safe_text import quoted
from videorl_kit.core.suggest import did_you_mean
from videorl_kit.core.verifiers import (
    UnknownVerifierError,
    available_verifiers,
    default_verifier_name,
    get_verifier,
)
from videorl_kit.hf.refs import HF_SCHEME
from videorl_kit.spec.data import iter_samples
from videorl_kit.spec.judging import JUDGE_SYNTHETIC_VARIABLES
from videorl_kit.spec.models import TaskSpec, VerifierRef
from videorl_kit.spec.paths import (
    ALLOW_ABSOLUTE_FIELD,
    ROOT_RULE,
    PathRefused,
    PathRoots,
    root_folders,
)
from videorl_kit.spec.prompt import (
    render_problem,
    sample_variables,
    synthetic_variables,
    template_problem,
)
from videorl_kit.spec.protocols import ProtocolError, apply_protocol
from videorl_kit.spec.yaml_source import (
    FieldPath,
    HubResolver,
    SpecIssue,
    SpecLoadError,
    YamlDocument,
    dotted,
    load_yaml_with_includes,
)

#: Problems listed per spec; a file with more (say 100,000 unknown keys) gets a count.
MAX_REPORTED_ISSUES = 100
#: What replaces the text of an included file in messages about it.
NOT_QUOTED = "not quoted: it comes from an included file"
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


class SpecError(UserError):
    """A spec failed to load; ``issues`` lists every problem found."""

    def __init__(self, issues: list[SpecIssue]):
        self.issues = issues
        super().__init__("\n".join(str(i) for i in issues))


def load_spec(
    path: str | Path, hub_resolver: HubResolver | None = None, *, check_first_row: bool = False
) -> TaskSpec:
    """Read, merge (``include:``) and validate one spec file.

    ``path`` may also be an ``hf://ORG/NAME@REV/file.yaml`` URI. Raises
    :class:`SpecError` listing all problems. The returned spec has its default verifier
    filled in (and the newest version of each verifier whose version the spec leaves out),
    ``source_file`` set and ``provenance`` listing Hub files and revisions. The prompt
    template is rendered on a made-up row (a template that hangs or blows up is an error);
    with ``check_first_row`` (``validate``), also on the first data row when the data is a
    readable local file.

    Example:
        >>> import tempfile
        >>> from videorl_kit.synth import write_demo_task
        >>> spec = load_spec(write_demo_task(tempfile.mkdtemp()))  # rows of two problem types
        >>> spec.id, spec.problem_type
        ('demo', 'from_row')
    """
    try:
        doc = load_yaml_with_includes(path, hub_resolver)
    except SpecLoadError as exc:
        raise SpecError(exc.issues) from None
    issues = [
        *model_issues(doc, TaskSpec),
        *_verifier_issues(doc),
        *_template_issues(doc),
        *_path_issues(doc),
    ]
    if issues:
        raise SpecError(_reported(doc, issues))
    spec = _with_verifier_versions(TaskSpec.model_validate(doc.data))
    spec._source_file = doc.root_path
    spec = spec.with_provenance(doc.hub_files)
    issues = _protocol_issues(doc, spec)
    if issues:
        raise SpecError(_reported(doc, issues))
    if check_first_row:
        issues = _first_row_issues(doc, spec)
        if issues:
            raise SpecError(issues)
    return spec


def _reported(doc: YamlDocument, issues: list[SpecIssue]) -> list[SpecIssue]:
    """Issues in file and line order (the named file first), at most MAX_REPORTED_ISSUES."""
    ordered = sorted(_dedupe(issues), key=lambda i: (i.file != doc.file, i.file, i.line))
    if len(ordered) <= MAX_REPORTED_ISSUES:
        return ordered
    hidden = len(ordered) - MAX_REPORTED_ISSUES
    more = SpecIssue(doc.file, 1, "", f"... and {hidden} more problems not listed")
    return [*ordered[:MAX_REPORTED_ISSUES], more]


def load_specs(paths: list[str | Path]) -> list[TaskSpec]:
    """Load several specs, collecting the problems of all files into one :class:`SpecError`.

    Duplicate ids across files are reported too.
    """
    specs: list[TaskSpec] = []
    issues: list[SpecIssue] = []
    seen: dict[str, Path] = {}
    for path in paths:
        try:
            spec = load_spec(path)
        except SpecError as exc:
            issues.extend(exc.issues)
            continue
        if spec.id in seen:
            issues.append(
                SpecIssue(
                    str(path), 1, "id", f"duplicate task id {spec.id!r} (also in {seen[spec.id]})"
                )
            )
            continue
        seen[spec.id] = Path(path)
        specs.append(spec)
    if issues:
        raise SpecError(issues)
    return specs


def default_verifier_ref(problem_type: ProblemType | str) -> VerifierRef:
    """The verifier a spec of ``problem_type`` uses when it names none, at its newest version.

    Example:
        >>> default_verifier_ref("multiple choice").model_dump()
        {'name': 'choice', 'version': 2, 'params': {}}
    """
    info = get_verifier(default_verifier_name(problem_type))
    return VerifierRef(name=info.name, version=info.version, params={})


def _with_verifier_versions(spec: TaskSpec) -> TaskSpec:
    """``spec`` with its default verifier filled in (one-type specs) and every verifier that
    leaves its version out pinned to the newest, so the resolved spec records it."""

    def pinned(ref: VerifierRef) -> VerifierRef:
        if ref.version is not None:
            return ref
        return ref.model_copy(update={"version": get_verifier(ref.name).version})

    update: dict[str, Any] = {}
    if spec.verifier is None:
        if isinstance(spec.problem_type, ProblemType):
            update["verifier"] = default_verifier_ref(spec.problem_type)
    elif spec.verifier.version is None:
        update["verifier"] = pinned(spec.verifier)
    if any(ref.version is None for ref in spec.verifiers.values()):
        update["verifiers"] = {ptype: pinned(ref) for ptype, ref in spec.verifiers.items()}
    return spec.model_copy(update=update) if update else spec


def _dedupe(issues: list[SpecIssue]) -> list[SpecIssue]:
    seen: set[str] = set()
    unique = []
    for issue in issues:
        if str(issue) not in seen:
            seen.add(str(issue))
            unique.append(issue)
    return unique


def _suggest(word: str, candidates: list[str]) -> str:
    return did_you_mean(str(word), candidates)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The first pydantic model in an annotation (``M``, ``M | None``, ``list[M]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _model_at(root: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model under ``root`` that owns the field at ``loc`` (None inside dicts)."""
    model: type[BaseModel] | None = root
    for part in loc:
        if isinstance(part, int):
            continue  # an item of a list of models
        if model is None or not isinstance(part, str) or part not in model.model_fields:
            return None
        model = _model_in(model.model_fields[part].annotation)
    return model


def model_issues(doc: YamlDocument, model: type[BaseModel]) -> list[SpecIssue]:
    """Every problem of validating ``doc`` as ``model``, at its file and line.

    Unknown keys get "did you mean" suggestions from the fields allowed where they stand.
    Training recipes are validated with the same function.
    """
    try:
        model.model_validate(doc.data)
    except ValidationError as exc:
        return [_issue_from_error(doc, err, model) for err in exc.errors()]
    return []


def _issue_from_error(doc: YamlDocument, err: dict[str, Any], root: type[BaseModel]) -> SpecIssue:
    """One pydantic error as an issue; text from an included file is never quoted."""
    loc = tuple(
        p
        for p in err["loc"]
        if not (isinstance(p, str) and (p.startswith("function-") or p == "[key]"))
    )
    message = str(err["msg"]).removeprefix("Value error, ")
    kind = err["type"]
    file, line = doc.origin(loc)
    quote = doc.quotes(file)
    if kind == "extra_forbidden":
        parent = _model_at(root, loc[:-1])
        allowed = list(parent.model_fields) if parent and loc != ("include",) else []
        listed = f" (allowed: {', '.join(allowed)})" if allowed else ""
        if not quote:
            return SpecIssue(file, line, dotted(loc[:-1]), f"unknown key ({NOT_QUOTED}){listed}")
        message = f"unknown key {quoted(loc[-1])}" + _suggest(str(loc[-1]), allowed)
        if not message.endswith("?"):
            message += listed
    elif kind == "missing":
        message = "missing required field"
    elif message.startswith("unknown problem type") and isinstance(err.get("input"), str):
        message = unknown_problem_type_message(err["input"], from_row=loc == ("problem_type",))
        if not quote:  # text of an included file is not quoted
            message = "unknown problem type (" + message.rpartition(" (")[2]
    else:
        owner = _model_at(root, loc)
        field, sep, rest = message.partition(": ")
        if sep and owner is not None and field in owner.model_fields:
            loc, message = (*loc, field), rest  # model-level check aimed at one field
            file, line = doc.origin(loc)
        if kind == "value_error" and not doc.quotes(file):  # our own checks may quote input
            message = _QUOTED.sub("'…'", message)
    return SpecIssue(file, line, dotted(loc), message)


def _verifier_issues(doc: YamlDocument) -> list[SpecIssue]:
    """Problems of ``verifier`` and of each entry of ``verifiers`` (registry, type, params)."""
    refs: list[tuple[tuple[Any, ...], Any, Any]] = [
        (("verifier",), doc.data.get("verifier"), doc.data.get("problem_type"))
    ]
    per_type = doc.data.get("verifiers")
    if isinstance(per_type, dict):
        refs += [(("verifiers", key), ref, key) for key, ref in per_type.items()]
    return [issue for at, ref, ptype in refs for issue in _verifier_ref_issues(doc, at, ref, ptype)]


def _verifier_ref_issues(
    doc: YamlDocument, at: tuple[Any, ...], verifier: Any, problem_type: Any
) -> list[SpecIssue]:
    if not isinstance(verifier, dict) or not isinstance(verifier.get("name"), str):
        return []
    name, version = verifier["name"], verifier.get("version")
    version = version if isinstance(version, int) else None

    def issue(path: tuple[Any, ...], message: str, unquoted: str) -> SpecIssue:
        file, line = doc.origin((*at, *path))
        if doc.quotes(file):
            return SpecIssue(file, line, dotted((*at, *path)), message)
        return SpecIssue(file, line, dotted(at[:1]), unquoted)

    try:
        info = get_verifier(name, version=version)
    except UnknownVerifierError as exc:
        field = "name" if name not in available_verifiers() else "version"
        unquoted = f"unknown verifier ({NOT_QUOTED}; available: {', '.join(available_verifiers())})"
        return [issue((field,), str(exc), unquoted)]
    issues = []
    try:
        canonical = canonical_problem_type(problem_type) if isinstance(problem_type, str) else None
    except ValueError:
        canonical = None  # from_row, or an unknown type reported on its own
    if canonical is not None and canonical not in info.problem_types:
        fits = ", ".join(sorted(t.value for t in info.problem_types))
        scores = f"does not score {canonical.value!r} (it scores: {fits})"
        issues.append(
            issue(("name",), f"verifier {quoted(name)} {scores}", f"the verifier {scores}")
        )
    params = verifier.get("params", {})
    if isinstance(params, dict):
        try:
            info.params_model.model_validate(params)
        except ValidationError as exc:
            allowed = list(info.params_model.model_fields)
            listed = f"allowed: {', '.join(allowed) or 'none'}"
            for err in exc.errors():
                message = str(err["msg"]).removeprefix("Value error, ")
                unquoted = _QUOTED.sub("'…'", message)
                if err["type"] == "extra_forbidden":
                    key = str(err["loc"][-1])
                    message = f"unknown parameter {quoted(key)} for verifier {quoted(name)}"
                    message += _suggest(key, allowed) + f" ({listed})"
                    unquoted = f"unknown parameter ({NOT_QUOTED}; {listed})"
                issues.append(issue(("params", *err["loc"]), message, unquoted))
    return issues


def _template_issues(doc: YamlDocument) -> list[SpecIssue]:
    """Templates that do not compile, or that hang or blow up on a made-up row."""
    prompt = doc.data.get("prompt")
    if not isinstance(prompt, dict):
        return []
    issues = []
    for key in ("template", "system"):
        text = prompt.get(key)
        if not isinstance(text, str):
            continue
        file, line = doc.origin(("prompt", key))
        problem = template_problem(text)
        if problem is None and key == "template":
            message = render_problem(text, _synthetic_variables(doc), synthetic=True)
        elif problem is not None:
            message = str(problem) if doc.quotes(file) else problem.summary
        else:
            message = None
        if message is not None:
            issues.append(SpecIssue(file, line, f"prompt.{key}", message))
    return issues


def _protocol_issues(doc: YamlDocument, spec: TaskSpec) -> list[SpecIssue]:
    """Each offered protocol merges into a valid spec whose templates render on a made-up
    row (a problem is reported at the protocol's own line)."""
    if spec.eval is None:
        return []
    issues = []
    for name in spec.eval.protocols:
        at = ("eval", "protocols", name)
        try:
            merged = apply_protocol(spec, name)
        except ProtocolError as exc:
            for loc, message in exc.problems or [((), str(exc))]:
                file, line = doc.origin((*at, *loc))
                shown = message if doc.quotes(file) else _QUOTED.sub("'…'", message)
                issues.append(SpecIssue(file, line, dotted((*at, *loc)), shown))
            continue
        variables = synthetic_variables(
            str(merged.problem_type), {k: v for k, v in merged.data.fields.model_dump().items()}
        )
        checks: list[tuple[tuple[str, ...], str | None, dict[str, Any] | None]] = [
            (("prompt", "template"), merged.prompt.template, variables),
            (("prompt", "system"), merged.prompt.system, None),
        ]
        judge = merged.eval.judge if merged.eval is not None else None
        if judge is not None:
            checks.append((("judge", "prompt"), judge.prompt, JUDGE_SYNTHETIC_VARIABLES))
        for path, text, synthetic in checks:
            if text is None:
                continue
            problem = template_problem(text)
            if problem is None and synthetic is not None:
                message = render_problem(text, synthetic, synthetic=True)
            else:
                message = None if problem is None else problem.summary
            if message is not None:
                file, line = doc.origin((*at, *path))
                issues.append(SpecIssue(file, line, dotted((*at, *path)), message))
    return issues


def _synthetic_variables(doc: YamlDocument) -> dict[str, Any]:
    data = doc.data.get("data")
    fields = data.get("fields") if isinstance(data, dict) else None
    names = (
        {k: v for k, v in fields.items() if isinstance(v, str)} if isinstance(fields, dict) else {}
    )
    problem_type = doc.data.get("problem_type")
    return synthetic_variables(problem_type if isinstance(problem_type, str) else "", names)


def _first_row_issues(doc: YamlDocument, spec: TaskSpec) -> list[SpecIssue]:
    """The template rendered on the first data row, when the data is a readable local file."""
    if spec.data.path is None:
        return []  # Hub data: validating never downloads it
    try:
        sample = next(iter_samples(spec), None)
    except UserError:
        return []  # unreadable data: the made-up row was rendered already
    if sample is None or sample.skip_reason is not None:
        return []
    problem = render_problem(spec.prompt.template, sample_variables(sample), synthetic=False)
    if problem is None:
        return []
    file, line = doc.origin(("prompt", "template"))
    message = f"fails on the first data row ({sample.sample_id}): {problem}"
    return [SpecIssue(file, line, "prompt.template", message)]


def _path_issues(doc: YamlDocument) -> list[SpecIssue]:
    """``data.path`` and ``data.media_root`` must stay inside the spec's root."""
    data = doc.data.get("data")
    if not isinstance(data, dict):
        return []
    issues = []
    allow = data.get("allow_absolute_paths") is True
    if allow:
        file, line = doc.origin(("data", "allow_absolute_paths"))
        if doc.root.from_hub or file.startswith(HF_SCHEME):
            message = (
                "a spec from the Hub cannot read outside its own folder; set "
                f"{ALLOW_ABSOLUTE_FIELD}: true in a local spec that includes it"
            )
            issues.append(SpecIssue(file, line, ALLOW_ABSOLUTE_FIELD, message))
            allow = False
    roots = PathRoots(root_folders(doc.root), allow_absolute=allow)
    base = Path(os.path.abspath(doc.root_path)).parent
    for key in ("path", "media_root"):
        value = data.get(key)
        if not isinstance(value, str):
            continue
        location: FieldPath = ("data", key)
        file, line = doc.origin(location)
        try:
            roots.resolve(value, base=base, field=dotted(location))
        except PathRefused as exc:
            shown = (
                f"{quoted(exc.written)} {exc.reason}"
                if doc.quotes(file)
                else f"the path {exc.reason}"
            )
            hint = f"; set {ALLOW_ABSOLUTE_FIELD}: true to read it" if exc.allowable else ""
            rule = f"; {ROOT_RULE}" if exc.outside else ""
            issues.append(SpecIssue(file, line, exc.field, f"{shown}{hint}{rule}"))
    return issues


def is_base_file(path: str | Path) -> bool:
    """Whether ``path`` is an include-only base (name starts with ``_``), not a task.

    Example:
        >>> is_base_file("task_specs/_base_video.yaml"), is_base_file("task_specs/synth-count.yaml")
        (True, False)
    """
    return Path(str(path)).name.startswith("_")


def discover_spec_paths(paths: list[str | Path]) -> list[Path | str]:
    """Expand folders to their ``*.yaml`` files (sorted) and drop include-only bases.

    ``hf://`` URIs pass through unchanged. A path that does not exist is kept, so that
    loading it reports "file not found" instead of silently skipping it.
    """
    found: list[Path | str] = []
    for entry in paths:
        if str(entry).startswith(HF_SCHEME):
            found.append(str(entry))
            continue
        path = Path(entry)
        if path.is_dir():
            files = sorted([*path.rglob("*.yaml"), *path.rglob("*.yml")])
            found.extend(f for f in files if not is_base_file(f))
        elif not is_base_file(path):
            found.append(path)
    return found
