"""``pull`` against a misbehaving server: downloads are capped at the sizes the manifest
declares, and a bad entry in the repo tree is refused in one line before anything is fetched."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.hub.hub_server import HubServer
from videorl_kit.hub import HubIntegrityError, publish, pull

REPO = "my-org/video-tasks"
SPEC = "specs/synth-count.yaml"


def files_under(root: Path) -> set[str]:
    return (
        {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
        if root.exists()
        else set()
    )


def test_a_server_sending_more_than_declared_is_cut_off(
    hub: HubServer, spec_paths: list[Path], tmp_path: Path
) -> None:
    publish(spec_paths, REPO, endpoint=hub.url)
    declared = len(hub.read(REPO, SPEC))
    hub.send_extra_bytes(REPO, SPEC, 64 << 20)  # 64 MiB more, with no Content-Length
    dest = tmp_path / "copy"
    with pytest.raises(HubIntegrityError) as info:
        pull(REPO, dest=dest, endpoint=hub.url)
    message = str(info.value)
    assert len(message.splitlines()) == 1
    assert (
        f"{SPEC}: the server sent more than the {declared} bytes the manifest declares" in message
    )
    deadline = time.monotonic() + 30
    while (REPO, SPEC) not in hub.state.sent_extra and time.monotonic() < deadline:
        time.sleep(0.05)  # the server notices the hang-up on its next write
    assert hub.state.sent_extra[(REPO, SPEC)] < 16 << 20  # stopped long before the end
    assert not (dest / SPEC).exists()
    assert not [p for p in files_under(dest) if p.endswith(".part")]


def _add(entry: dict[str, Any]) -> Callable[[list[dict]], list[dict]]:
    return lambda entries: [*entries, entry]


def _without_size(entries: list[dict]) -> list[dict]:
    return [{k: v for k, v in e.items() if k != "size"} for e in entries]


BAD_TREES: dict[str, tuple[Callable[[list[dict]], list[Any]], str]] = {
    "path traversal": (_add({"type": "file", "path": "../../evil.py", "size": 4, "oid": "0"}),
                       "path '../../evil.py' leaves the repo"),
    "absolute path": (_add({"type": "file", "path": "/etc/passwd", "size": 4, "oid": "0"}),
                      "path '/etc/passwd' leaves the repo"),
    "wrong type": (_add({"type": "symlink", "path": "specs/link", "size": 4}),
                   "type 'symlink' is neither file nor directory"),
    "missing size": (_without_size, "size None is not a byte count"),
    "negative size": (_add({"type": "file", "path": "x.bin", "size": -1}),
                      "size -1 is not a byte count"),
    "not an object": (_add(["file", "x.bin"]), "not an object"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD_TREES))
def test_a_bad_tree_entry_is_one_line_and_nothing_is_downloaded(
    hub: HubServer, spec_paths: list[Path], tmp_path: Path, case: str
) -> None:
    publish(spec_paths, REPO, endpoint=hub.url)
    transform, reason = BAD_TREES[case]
    hub.list_tree_as(transform)
    dest = tmp_path / "copy"
    with pytest.raises(HubIntegrityError) as info:
        pull(REPO, dest=dest, endpoint=hub.url)
    message = str(info.value)
    assert len(message.splitlines()) == 1
    assert f"bad entry in the repo tree ({reason})" in message
    assert hub.count("GET", "/resolve/") == 0
    assert files_under(dest) == set()
    assert not (tmp_path / "evil.py").exists()


def test_a_file_listed_larger_than_declared_is_not_downloaded(
    hub: HubServer, spec_paths: list[Path], tmp_path: Path
) -> None:
    publish(spec_paths, REPO, endpoint=hub.url)
    hub.list_tree_as(
        lambda entries: [{**e, "size": 1 << 40} if e["path"] == SPEC else e for e in entries]
    )
    with pytest.raises(HubIntegrityError, match=rf"{SPEC}: size {1 << 40} != \d+ in the repo"):
        pull(REPO, dest=tmp_path / "copy", endpoint=hub.url)
    assert hub.count("GET", "/resolve/") and not hub.count("GET", SPEC)


def test_a_complete_earlier_pull_is_reused_without_the_server(
    hub: HubServer, spec_paths: list[Path], tmp_path: Path
) -> None:
    result = publish(spec_paths, REPO, endpoint=hub.url)
    dest = tmp_path / "copy"
    pull(REPO, dest=dest, endpoint=hub.url)
    hub.stop()
    again = pull(f"{REPO}@{result.revision}", dest=dest, endpoint=hub.url)
    assert [s.id for s in again.specs] == ["synth-count", "synth-color"]
