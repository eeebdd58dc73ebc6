"""Real-world videos from Debian packages, fetched once into a cache folder outside the repo.

The packages below ship sample videos of many kinds (MP4 with edit lists, AVI with dropped or
packed B-frames, Matroska, MPEG-PS, Ogg/Theora). GIF files are left out: the kit treats a
GIF as an image (a video row naming one is a data-type mismatch). ``apt-get download`` fetches
the ``.deb`` files without installing anything and ``dpkg -x`` unpacks them into
``$VIDEORL_TEST_CACHE`` (default ``~/.cache/videorl-kit-tests``)``/debian-videos``, where
later runs find them again. A folder is only used once a marker file says it is complete.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

PACKAGES: tuple[str, ...] = (
    "opencv-doc",
    "python3-imageio",
    "python3-mecavideo",
    "forensics-samples-files",
    "planetblupi-common",
)
VIDEO_SUFFIXES = frozenset(
    {".mp4", ".m4v", ".mov", ".avi", ".mkv", ".webm", ".mpg", ".mpeg", ".ogv", ".ogg"}
)
_MARKER = ".complete"


class FetchError(Exception):
    """The packages could not be downloaded or unpacked."""


def cache_root() -> Path:
    """Where fetched test data lives (outside the repository)."""
    base = os.environ.get("VIDEORL_TEST_CACHE")
    return Path(base) if base else Path.home() / ".cache" / "videorl-kit-tests"


def _run(argv: list[str], cwd: Path) -> None:
    try:
        subprocess.run(argv, cwd=cwd, check=True, capture_output=True, text=True, timeout=900)
    except FileNotFoundError as exc:
        raise FetchError(f"{argv[0]} is not available ({exc})") from None
    except subprocess.CalledProcessError as exc:
        raise FetchError(f"{' '.join(argv)} failed: {exc.stderr.strip()[-400:]}") from None
    except subprocess.TimeoutExpired:
        raise FetchError(f"{' '.join(argv)} timed out") from None


def _download(folder: Path) -> None:
    try:
        _run(["apt-get", "download", *PACKAGES], folder)
    except FetchError:
        if os.geteuid() != 0:
            raise
        _run(["apt-get", "update", "-qq"], folder)  # stale package lists: refresh once
        _run(["apt-get", "download", *PACKAGES], folder)


def fetch_debian_videos() -> Path:
    """The unpacked packages' root folder, downloading them on first use."""
    target = cache_root() / "debian-videos"
    marker = target / _MARKER
    if marker.is_file() and marker.read_text().split() == list(PACKAGES):
        return target / "x"
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="debian-videos-", dir=target.parent))
    try:
        _download(work)
        for deb in sorted(work.glob("*.deb")):
            _run(["dpkg", "-x", str(deb), str(work / "x")], work)
            deb.unlink()
        (work / _MARKER).write_text(" ".join(PACKAGES) + "\n")
        shutil.rmtree(target, ignore_errors=True)
        work.rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target / "x"


def candidate_videos(root: Path) -> list[Path]:
    """Every file under ``root`` named like a video, sorted."""
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in VIDEO_SUFFIXES)
