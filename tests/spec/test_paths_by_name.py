"""``PathRoots(by_name_only=True)`` (re-reading a built store's rows) resolves every path the
way the full resolver does when no link or special file is involved: same path, same refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from videorl_kit.spec.paths import PathRefused, PathRoots

WRITTEN = ["a.mp4", "./x//b.mp4", "sub/../c.mp4", "../e.mp4", "../root/z.mp4", "/etc/passwd",
           "ROOT/abs.mp4", "ROOT", "/"]  # fmt: skip


def _outcome(roots: PathRoots, written: str, base: Path) -> object:
    try:
        return roots.resolve(written, base=base)
    except PathRefused as exc:
        return ("refused", str(exc).split(";")[0])


@pytest.mark.parametrize("allow_absolute", [False, True])
@pytest.mark.parametrize("written", WRITTEN)
def test_by_name_matches_the_full_resolver(
    tmp_path: Path, written: str, allow_absolute: bool
) -> None:
    root = tmp_path / "root"
    (root / "x").mkdir(parents=True)
    written = written.replace("ROOT", str(root))
    full = PathRoots((root,), allow_absolute=allow_absolute)
    by_name = PathRoots((root,), allow_absolute=allow_absolute, by_name_only=True)
    assert _outcome(by_name, written, root) == _outcome(full, written, root)
