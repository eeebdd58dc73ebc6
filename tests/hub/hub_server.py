"""A small Hub-compatible HTTP server for tests, run on 127.0.0.1 in a background thread.

It implements the endpoints the real ``huggingface_hub`` client (2.x) calls for
``create_repo``, ``create_commit`` (``validate-yaml``, ``preupload``, NDJSON ``commit``;
regular uploads only), ``create_tag``, ``repo_info`` (``/api/datasets/{repo}`` and
``/revision/{rev}``), ``list_repo_tree`` (used by ``snapshot_download``) and file download
(``HEAD``/``GET /datasets/{repo}/resolve/{rev}/{path}`` with ``X-Repo-Commit``, ``ETag`` and
``Content-Length``). Errors carry the ``X-Error-Code`` values the client maps to its
exception classes (``RepoNotFound``, ``RevisionNotFound``, ``EntryNotFound``).

Storage is git-like: blobs are content-addressed by their git blob sha1 under
``<root>/blobs``; each commit is a full tree ``{path: blob oid}`` whose id is the sha1 of
its tree, parent and message. Test helpers change stored state behind the client's back
(:meth:`HubServer.tamper_blob`, :meth:`HubServer.drop_from_history`,
:meth:`HubServer.lose_blob`) to simulate a compromised or damaged server.

Example:
    >>> server = HubServer.start(tmp_path)  # doctest: +SKIP
    >>> HfApi(endpoint=server.url).create_repo("org/x", repo_type="dataset")  # doctest: +SKIP
    >>> server.stop()  # doctest: +SKIP
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import re
import socket
import threading
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

TYPE_PLURALS = {"models": "model", "datasets": "dataset", "spaces": "space"}
URL_PREFIX = {"model": "", "dataset": "datasets/", "space": "spaces/"}
GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n*.lance/** filter=lfs -text\n"


def git_blob_oid(data: bytes) -> str:
    """The git object id of a blob (what ``git hash-object`` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Commit:
    oid: str
    parent: str | None
    tree: dict[str, str]
    title: str
    description: str
    date: str


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    created_at: str
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    commits: dict[str, Commit] = field(default_factory=dict)


class HttpError(Exception):
    """Raised inside a handler to answer with an error status and Hub error headers."""

    def __init__(
        self,
        status: int,
        message: str,
        code: str | None = None,
        *,
        body: dict[str, Any] | None = None,
        **headers: str,
    ):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.body = body or {}
        self.headers = headers


class HubState:
    """All repos and blobs, guarded by one lock."""

    def __init__(self, root: Path, token: str | None):
        self.root = root
        self.blob_dir = root / "blobs"
        self.blob_dir.mkdir(parents=True, exist_ok=True)
        self.token = token
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lock = threading.RLock()
        self.requests: list[tuple[str, str]] = []
        self.sizes: dict[str, int] = {}  # blob oid -> size, kept when a blob is lost
        self.oversend: dict[tuple[str, str], int] = {}  # (repo, path) -> extra bytes to serve
        self.sent_extra: dict[tuple[str, str], int] = {}  # (repo, path) -> extra bytes sent
        self.tree_filter: Any = None  # callable: the tree entries a misbehaving server lists
        self._counter = 0

    # -- storage -------------------------------------------------------------------------
    def put_blob(self, data: bytes) -> str:
        oid = git_blob_oid(data)
        self.sizes[oid] = len(data)
        path = self.blob_dir / oid
        if not path.exists():
            path.write_bytes(data)
        return oid

    def read_blob(self, oid: str) -> bytes | None:
        path = self.blob_dir / oid
        return path.read_bytes() if path.exists() else None

    def new_commit(
        self, repo: Repo, parent: str | None, tree: dict[str, str], title: str, description: str
    ) -> Commit:
        self._counter += 1
        tree_text = "".join(f"{oid} {path}\n" for path, oid in sorted(tree.items()))
        tree_id = hashlib.sha1(tree_text.encode()).hexdigest()
        body = f"tree {tree_id}\nparent {parent}\nseq {self._counter}\n\n{title}\n{description}"
        oid = hashlib.sha1(f"commit {len(body)}\0{body}".encode()).hexdigest()
        commit = Commit(oid, parent, dict(tree), title, description, _now())
        repo.commits[oid] = commit
        return commit

    def resolve(self, repo: Repo, revision: str) -> Commit:
        sha = repo.branches.get(revision) or repo.tags.get(revision)
        if sha is None and revision in repo.commits:
            sha = revision
        if sha is None:
            raise HttpError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        return repo.commits[sha]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    # quiet test output
    def log_message(self, format: str, *args: Any) -> None:
        return

    @property
    def state(self) -> HubState:
        return self.server.state

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    # -- plumbing ------------------------------------------------------------------------
    def _dispatch(self, method: str) -> None:
        split = urlsplit(self.path)
        raw_parts = split.path.strip("/").split("/")
        query = {k: v[-1] for k, v in parse_qs(split.query).items()}
        body = b""
        if method == "POST":
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
        with self.state.lock:
            self.state.requests.append((method, split.path))
        try:
            with self.state.lock:
                self._route(method, raw_parts, query, body)
        except HttpError as exc:
            headers = dict(exc.headers)
            if exc.code:
                headers["X-Error-Code"] = exc.code
            headers["X-Error-Message"] = exc.message
            self._send_json(
                exc.status,
                {"error": exc.message, **exc.body},
                headers=headers,
                head=method == "HEAD",
            )

    def _send_json(
        self, status: int, data: Any, *, headers: dict[str, str] | None = None, head: bool = False
    ) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if not head:
            self.wfile.write(payload)

    def _authorized(self) -> bool:
        if self.state.token is None:
            return True
        return self.headers.get("Authorization") == f"Bearer {self.state.token}"

    def _require_write(self) -> None:
        if not self._authorized():
            raise HttpError(401, "Invalid credentials in Authorization header")

    def _repo(self, repo_type: str, repo_id: str) -> Repo:
        repo = self.state.repos.get((repo_type, repo_id))
        if repo is None or (repo.private and not self._authorized()):
            raise HttpError(404, "Repository not found", "RepoNotFound")
        return repo

    # -- routing -------------------------------------------------------------------------
    def _route(self, method: str, parts: list[str], query: dict[str, str], body: bytes) -> None:
        if parts[:1] == ["api"]:
            if parts[1:3] == ["repos", "create"] and method == "POST":
                return self._create_repo(json.loads(body or b"{}"))
            if parts[1:2] == ["validate-yaml"] and method == "POST":
                return self._validate_yaml(json.loads(body or b"{}"))
            if len(parts) >= 4 and parts[1] in TYPE_PLURALS:
                repo_type = TYPE_PLURALS[parts[1]]
                repo_id = f"{unquote(parts[2])}/{unquote(parts[3])}"
                action, rest = (parts[4], parts[5:]) if len(parts) > 4 else (None, [])
                if action is None and method == "GET":
                    return self._info(repo_type, repo_id, "main")
                if action == "revision" and method == "GET" and rest:
                    return self._info(repo_type, repo_id, unquote(rest[0]))
                if action == "tree" and method == "GET" and rest:
                    path = unquote("/".join(rest[1:]))
                    return self._tree(repo_type, repo_id, unquote(rest[0]), path, query)
                if action == "preupload" and method == "POST" and rest:
                    return self._preupload(repo_type, repo_id, unquote(rest[0]), json.loads(body))
                if action == "commit" and method == "POST" and rest:
                    return self._commit(repo_type, repo_id, unquote(rest[0]), body)
                if action == "tag" and method == "POST" and rest:
                    return self._tag(repo_type, repo_id, unquote(rest[0]), json.loads(body))
            raise HttpError(404, f"no such API route: {method} /{'/'.join(parts)}")
        repo_type = "model"
        if parts[:1] in (["datasets"], ["spaces"]):
            repo_type = TYPE_PLURALS[parts[0]]
            parts = parts[1:]
        if len(parts) >= 5 and parts[2] == "resolve" and method in ("GET", "HEAD"):
            repo_id = f"{unquote(parts[0])}/{unquote(parts[1])}"
            return self._resolve(
                repo_type, repo_id, unquote(parts[3]), unquote("/".join(parts[4:])), method
            )
        raise HttpError(404, f"not found: /{'/'.join(parts)}")

    # -- endpoints -----------------------------------------------------------------------
    def _create_repo(self, payload: dict[str, Any]) -> None:
        self._require_write()
        repo_type = payload.get("type") or "model"
        name, org = payload.get("name"), payload.get("organization")
        if not name or not org:
            raise HttpError(400, "name and organization are required")
        repo_id = f"{org}/{name}"
        if (repo_type, repo_id) in self.state.repos:
            raise HttpError(
                409, "You already created this repo", body={"url": self._url(repo_type, repo_id)}
            )
        private = payload.get("visibility") == "private" or bool(payload.get("private"))
        repo = Repo(repo_type, repo_id, private, _now())
        initial = self.state.new_commit(
            repo, None, {".gitattributes": self.state.put_blob(GITATTRIBUTES)}, "initial commit", ""
        )
        repo.branches["main"] = initial.oid
        self.state.repos[(repo_type, repo_id)] = repo
        self._send_json(200, {"url": self._url(repo_type, repo_id), "name": repo_id, "id": repo_id})

    def _validate_yaml(self, payload: dict[str, Any]) -> None:
        content = payload.get("content", "")
        errors: list[dict[str, str]] = []
        lines = content.splitlines()
        if lines and lines[0].strip() == "---":
            end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
            if end is None:
                errors.append({"message": "metadata block is not closed"})
            else:
                try:
                    meta = yaml.safe_load("\n".join(lines[1:end]))
                except yaml.YAMLError as exc:
                    errors.append({"message": f"invalid YAML: {exc}"})
                    meta = None
                if meta is not None and not isinstance(meta, dict):
                    errors.append({"message": "metadata must be a mapping"})
                elif isinstance(meta, dict):
                    for config in meta.get("configs") or []:
                        if not isinstance(config, dict) or "config_name" not in config:
                            errors.append({"message": "configs: config_name is required"})
        if errors:
            self._send_json(400, {"errors": errors, "warnings": []})
        else:
            self._send_json(200, {"errors": [], "warnings": []})

    def _info(self, repo_type: str, repo_id: str, revision: str) -> None:
        repo = self._repo(repo_type, repo_id)
        commit = self.state.resolve(repo, revision)
        self._send_json(
            200,
            {
                "_id": hashlib.sha1(repo_id.encode()).hexdigest()[:24],
                "id": repo_id,
                "author": repo_id.split("/")[0],
                "sha": commit.oid,
                "private": repo.private,
                "gated": False,
                "disabled": False,
                "downloads": 0,
                "likes": 0,
                "tags": [],
                "createdAt": repo.created_at,
                "lastModified": commit.date,
                "siblings": [{"rfilename": path} for path in sorted(commit.tree)],
            },
        )

    def _tree(
        self, repo_type: str, repo_id: str, revision: str, path: str, query: dict[str, str]
    ) -> None:
        repo = self._repo(repo_type, repo_id)
        commit = self.state.resolve(repo, revision)
        recursive = query.get("recursive", "false").lower() in ("1", "true")
        prefix = f"{path.strip('/')}/" if path.strip("/") else ""
        entries: dict[str, dict[str, Any]] = {}
        for file_path, oid in sorted(commit.tree.items()):
            if not file_path.startswith(prefix):
                continue
            rest = file_path[len(prefix) :].split("/")
            depth = len(rest) if recursive else 1
            for i in range(1, min(depth, len(rest) - 1) + 1):  # folders on the way
                folder = prefix + "/".join(rest[:i])
                entries.setdefault(
                    folder,
                    {
                        "type": "directory",
                        "oid": git_blob_oid(folder.encode()),
                        "size": 0,
                        "path": folder,
                    },
                )
            if recursive or len(rest) == 1:
                size = self.state.sizes.get(oid, 0)
                entries[file_path] = {"type": "file", "oid": oid, "size": size, "path": file_path}
        if prefix and not entries:
            raise HttpError(
                404, f"{path} does not exist", "EntryNotFound", **{"X-Repo-Commit": commit.oid}
            )
        listed = list(entries.values())
        if self.state.tree_filter is not None:
            listed = self.state.tree_filter(listed)
        self._send_json(200, listed)

    def _preupload(
        self, repo_type: str, repo_id: str, revision: str, payload: dict[str, Any]
    ) -> None:
        self._require_write()
        repo = self._repo(repo_type, repo_id)
        commit = self.state.resolve(repo, revision)
        files = [
            {
                "path": item["path"],
                "uploadMode": "regular",
                "shouldIgnore": False,
                "oid": commit.tree.get(item["path"]),
            }
            for item in payload.get("files", [])
        ]
        self._send_json(200, {"files": files, "commitOid": commit.oid})

    def _commit(self, repo_type: str, repo_id: str, revision: str, body: bytes) -> None:
        self._require_write()
        repo = self._repo(repo_type, repo_id)
        if revision not in repo.branches:
            raise HttpError(404, f"branch {revision} not found", "RevisionNotFound")
        head = repo.commits[repo.branches[revision]]
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        if not lines or lines[0].get("key") != "header":
            raise HttpError(400, "the first NDJSON line must be the commit header")
        header = lines[0]["value"]
        parent = header.get("parentCommit")
        if parent is not None and parent != head.oid:
            raise HttpError(412, "A commit has happened since. Please refresh and try again.")
        tree = dict(head.tree)
        for line in lines[1:]:
            key, value = line.get("key"), line.get("value", {})
            if key == "file":
                if value.get("encoding") != "base64":
                    raise HttpError(400, "only base64 file content is supported")
                tree[value["path"]] = self.state.put_blob(base64.b64decode(value["content"]))
            elif key == "deletedFile":
                if value["path"] not in tree:
                    raise HttpError(404, "A file with this name doesn't exist", "EntryNotFound")
                del tree[value["path"]]
            elif key == "deletedFolder":
                folder = value["path"].rstrip("/") + "/"
                tree = {p: o for p, o in tree.items() if not p.startswith(folder)}
            else:
                raise HttpError(
                    400,
                    f"unsupported commit operation {key!r} (this server stores regular files only)",
                )
        commit = self.state.new_commit(
            repo, head.oid, tree, header.get("summary", ""), header.get("description", "")
        )
        repo.branches[revision] = commit.oid
        self._send_json(
            200,
            {
                "success": True,
                "commitOid": commit.oid,
                "commitUrl": f"{self._url(repo_type, repo_id)}/commit/{commit.oid}",
                "hookOutput": "",
            },
        )

    def _tag(self, repo_type: str, repo_id: str, revision: str, payload: dict[str, Any]) -> None:
        self._require_write()
        repo = self._repo(repo_type, repo_id)
        commit = self.state.resolve(repo, revision)
        tag = payload["tag"]
        if tag in repo.tags:
            raise HttpError(409, f"tag {tag} already exists")
        repo.tags[tag] = commit.oid
        self._send_json(200, {})

    def _resolve(self, repo_type: str, repo_id: str, revision: str, path: str, method: str) -> None:
        repo = self._repo(repo_type, repo_id)
        commit = self.state.resolve(repo, revision)
        oid = commit.tree.get(path)
        data = self.state.read_blob(oid) if oid is not None else None
        if data is None:
            raise HttpError(
                404, "Entry not found", "EntryNotFound", **{"X-Repo-Commit": commit.oid}
            )
        extra = self.state.oversend.get((repo_id, path), 0)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if extra:  # no length: the body ends when the connection closes
            self.send_header("Connection", "close")
            self.close_connection = True
        else:
            self.send_header("Content-Length", str(len(data)))
        self.send_header("ETag", f'"{oid}"')
        self.send_header("X-Repo-Commit", commit.oid)
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if method == "GET":
            self.wfile.write(data)
            sent = 0
            with contextlib.suppress(OSError):  # the client hangs up once it has had enough
                while sent < extra:
                    step = min(1 << 16, extra - sent)
                    self.wfile.write(b"\0" * step)
                    sent += step
            self.state.sent_extra[(repo_id, path)] = sent

    def _url(self, repo_type: str, repo_id: str) -> str:
        return f"{self.server.url}/{URL_PREFIX[repo_type]}{repo_id}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: HubState
    url: str

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]):
        super().__init__(address, handler)
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """Close kept-alive client connections, so a stopped server really is gone."""
        with self._open_lock:
            sockets = list(self._open)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class HubServer:
    """A running server: ``url`` for ``HF_ENDPOINT``, plus helpers to inspect and damage state."""

    def __init__(self, httpd: _Server, thread: threading.Thread):
        self._httpd = httpd
        self._thread = thread
        self.url = httpd.url
        self.state = httpd.state
        self._stopped = False

    @classmethod
    def start(cls, root: Path, token: str | None = None) -> HubServer:
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.state = HubState(Path(root), token)
        httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"
        thread = threading.Thread(target=httpd.serve_forever, name="hub-server", daemon=True)
        thread.start()
        return cls(httpd, thread)

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._httpd.shutdown()
        self._httpd.server_close()
        self._httpd.drop_connections()
        self._thread.join(timeout=5)

    # -- inspection ----------------------------------------------------------------------
    def repo(self, repo_id: str, repo_type: str = "dataset") -> Repo:
        return self.state.repos[(repo_type, repo_id)]

    def head(self, repo_id: str, repo_type: str = "dataset") -> Commit:
        repo = self.repo(repo_id, repo_type)
        return repo.commits[repo.branches["main"]]

    def read(self, repo_id: str, path: str, revision: str = "main") -> bytes:
        with self.state.lock:
            commit = self.state.resolve(self.repo(repo_id), revision)
            data = self.state.read_blob(commit.tree[path])
        assert data is not None
        return data

    def record_commit_as(self, repo_id: str, oid: str, revision: str = "main") -> None:
        """Store the commit ``revision`` points to once more under ``oid`` (an upstream commit
        id that a shipped spec pins), so a download at ``oid`` is served that commit's tree."""
        with self.state.lock:
            repo = self.repo(repo_id)
            repo.commits[oid] = replace(self.state.resolve(repo, revision), oid=oid)

    def serve_dataset_file(self, repo_id: str, path: str, data: bytes, revision: str) -> None:
        """Publish ``data`` at ``path`` of dataset ``repo_id`` so that a download at
        ``revision`` gets it: committed on that branch, or, for a full 40-hex commit id (a
        shipped spec's pin), on ``main`` and recorded under that id too."""
        from huggingface_hub import HfApi

        api = HfApi(endpoint=self.url)
        api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
        pinned = re.fullmatch(r"[0-9a-f]{40}", revision) is not None
        api.upload_file(
            path_or_fileobj=data, path_in_repo=path, repo_id=repo_id, repo_type="dataset",
            revision="main" if pinned else revision,
        )  # fmt: skip
        if pinned:
            self.record_commit_as(repo_id, revision)

    def count(self, method: str, contains: str) -> int:
        with self.state.lock:
            return sum(1 for m, p in self.state.requests if m == method and contains in p)

    # -- damage --------------------------------------------------------------------------
    def tamper_blob(self, repo_id: str, path: str, data: bytes, revision: str = "main") -> None:
        """Overwrite the stored bytes of ``path`` (its id and history stay the same)."""
        with self.state.lock:
            commit = self.state.resolve(self.repo(repo_id), revision)
            (self.state.blob_dir / commit.tree[path]).write_bytes(data)

    def lose_blob(self, repo_id: str, path: str, revision: str = "main") -> None:
        """Delete the stored bytes of ``path``: still listed, but downloads answer 404."""
        with self.state.lock:
            commit = self.state.resolve(self.repo(repo_id), revision)
            (self.state.blob_dir / commit.tree[path]).unlink()

    def send_extra_bytes(self, repo_id: str, path: str, extra: int) -> None:
        """Serve ``path`` followed by ``extra`` more bytes, with no Content-Length."""
        with self.state.lock:
            self.state.oversend[(repo_id, path)] = extra

    def list_tree_as(self, transform: Any) -> None:
        """List every tree through ``transform(entries) -> entries`` (a lying server)."""
        with self.state.lock:
            self.state.tree_filter = transform

    def drop_from_history(self, repo_id: str, path: str) -> None:
        """Remove ``path`` from every commit's tree (a history rewrite on the server)."""
        with self.state.lock:
            for commit in self.repo(repo_id).commits.values():
                commit.tree.pop(path, None)
