"""The decoder registry: decoders found by name, one module each, loaded only when chosen."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import videorl_kit.media
from tests.media_kit import make_video
from tests.store.spec_files import video_rows, write_spec
from videorl_kit.media.decode import decode_video
from videorl_kit.media.decoders import decoder_names, get_decoder
from videorl_kit.media.errors import DecoderUnavailableError

MEDIA = Path(videorl_kit.media.__file__).parent
BUDGET = {"fps": 2.0, "min_frames": 4, "max_frames": 8, "min_pixels": 3136,
          "max_pixels": 12544, "patch": 28}  # fmt: skip


def test_every_module_of_the_package_is_a_decoder_the_default_first() -> None:
    assert decoder_names() == ("pyav", "decord", "torchcodec")
    for name in decoder_names():
        decoder = get_decoder(name)
        assert callable(decoder.version) and callable(decoder.decode), name


def test_a_missing_optional_package_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clip = make_video(tmp_path / "clip.mp4", 20, 10, (96, 64)).path
    monkeypatch.setitem(sys.modules, "decord", None)  # `import decord` fails as if absent
    with pytest.raises(DecoderUnavailableError) as raised:
        decode_video(clip, BUDGET, decoder="decord")
    assert str(raised.value) == (
        "decoder 'decord' is unavailable (ModuleNotFoundError: import of decord halted; None "
        "in sys.modules); install it with pip install 'videorl-kit[video]'"
    )
    assert decode_video(clip, BUDGET).decoder == "pyav"  # the default needs nothing more


def test_build_cache_refuses_an_unavailable_decoder_in_one_line_before_writing(
    tmp_path: Path,
) -> None:
    make_video(tmp_path / "a.mp4", 20, 10, (96, 64))
    spec = write_spec(tmp_path, "no-decord", video_rows(["a.mp4"]))
    command = "import sys; sys.modules['decord'] = None; from videorl_kit.cli import main; main()"
    store = tmp_path / "store"
    done = subprocess.run(
        [sys.executable, "-c", command, "build-cache", str(spec), "--store", str(store),
         "--decoder", "decord"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: decoder 'decord' is unavailable (ModuleNotFoundError: import of decord "
        "halted; None in sys.modules); install it with pip install 'videorl-kit[video]', "
        "or build with the default --decoder pyav"
    ]
    assert not store.exists()


def _kit_imports(path: Path) -> tuple[set[str], list[str]]:
    """(media modules ``path`` imports at module level, kit imports made inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top: set[str] = set()
    nested: list[str] = []
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    inside = {id(node) for f in functions for node in ast.walk(f)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        kit = [n for n in names if n.startswith("videorl_kit.")]
        if id(node) in inside:
            nested += kit
        else:
            top |= {n for n in kit if n.startswith("videorl_kit.media")}
    return top, nested


def test_media_modules_import_each_other_at_module_level_without_cycles() -> None:
    modules = {
        "videorl_kit." + ".".join(p.relative_to(MEDIA.parent).with_suffix("").parts): p
        for p in MEDIA.rglob("*.py")
    }
    modules = {name.removesuffix(".__init__"): path for name, path in modules.items()}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        top, nested = _kit_imports(path)
        assert not nested, f"{path}: kit imports inside functions: {nested}"
        graph[name] = {m for m in top if m in modules and m != name}
    done: set[str] = set()

    def visit(name: str, trail: tuple[str, ...]) -> None:
        assert name not in trail, f"import cycle: {' -> '.join((*trail, name))}"
        if name in done:
            return
        for imported in graph[name]:
            visit(imported, (*trail, name))
        done.add(name)

    for name in graph:
        visit(name, ())
    assert "videorl_kit.media.decoders.pyav" in graph  # the walk saw the decoder modules
