"""The layer contract (``[tool.importlinter]`` in pyproject.toml) holds and catches breaks.

import-linter reads the package from disk. ``adapters/`` is installed as
``videorl_kit.adapters`` (setup.py maps the folder), so each check runs on a view of the
source tree, made of symbolic links, that puts it there, as an installed kit has it.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _view(root: Path, extra: dict[str, str] | None = None) -> Path:
    """``root/videorl_kit``: links to the kit's entries and to ``adapters/``, plus ``extra``
    modules (path inside the package -> source) in real folders of their own."""
    package = root / "videorl_kit"
    package.mkdir()
    for entry in (REPO / "videorl_kit").iterdir():
        if entry.name not in ("adapters", "__pycache__"):
            (package / entry.name).symlink_to(entry)
    (package / "adapters").symlink_to(REPO / "adapters")
    for relative, source in (extra or {}).items():
        folder = package / Path(relative).parent
        if folder.is_symlink():  # unfold that one package into links to its files
            target = folder.resolve()
            folder.unlink()
            folder.mkdir()
            for entry in target.iterdir():
                (folder / entry.name).symlink_to(entry)
        (package / relative).write_text(source, encoding="utf-8")
    return root


def _lint(view: Path) -> subprocess.CompletedProcess[str]:
    command = [str(LINT_IMPORTS), "--config", str(REPO / "pyproject.toml"), "--no-cache"]
    env = {"PYTHONPATH": str(view), "PATH": "/usr/bin:/bin"}
    return subprocess.run(command, cwd=view, env=env, capture_output=True, text=True, timeout=300)


def test_the_kit_keeps_its_layers(tmp_path: Path) -> None:
    result = _lint(_view(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 2 kept, 0 broken." in result.stdout


@pytest.mark.parametrize(
    ("module", "source", "broken"),
    [
        ("spec/_upward.py", "from videorl_kit.rewards import router\n", "layers point down"),
        (
            "core/_lazy_upward.py",
            "def f():\n    from videorl_kit.media import geometry\n",  # inside a function
            "layers point down",
        ),
        ("train/_sideways.py", "import videorl_kit.eval.metrics\n", "layers point down"),
        (
            "rewards/_heavy.py",
            "def f():\n    import torch\n",
            "rewards, spec and core import nothing heavy",
        ),
    ],
)
def test_an_import_against_the_layers_breaks_the_contract(
    tmp_path: Path, module: str, source: str, broken: str
) -> None:
    result = _lint(_view(tmp_path, {module: source}))
    assert result.returncode == 1, result.stdout
    assert f"{broken} BROKEN" in result.stdout
    assert f"videorl_kit.{module.removesuffix('.py').replace('/', '.')}" in result.stdout


#: Kit imports that may sit inside a function, with why. Everything else imports at the top,
#: where the contract (and a reader) sees it.
LATE_IMPORTS_ALLOWED = {
    # the command line's glue: a command imports its heavy modules (Lance, PyAV, a training
    # backend) when it runs, so `videorl-kit --help` and `validate` start in about a second
    "cli.py": "command line",
    "commands.py": "command line",
    # TrainerCallback subclasses: they load with transformers (an optional heavy package)
    "adapters/trl/backend.py": "transformers",
}


def _late_kit_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    late = []
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                names = (
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else
                    [a.name for a in node.names] if isinstance(node, ast.Import) else []
                )  # fmt: skip
                late += [f"{path}:{node.lineno}: {n}" for n in names if n.startswith("videorl_kit")]
    return late


def test_kit_imports_sit_at_module_top() -> None:
    package = REPO / "videorl_kit"
    kit = [p for p in package.rglob("*.py") if p.relative_to(package).parts[0] != "adapters"]
    late = [
        line
        for path in [*kit, *(REPO / "adapters").rglob("*.py")]
        if not str(path).endswith(tuple(LATE_IMPORTS_ALLOWED))
        for line in _late_kit_imports(path)
    ]
    assert not late, "import these at the top of the module:\n" + "\n".join(late)


def test_the_readme_states_the_layout_and_layers_of_the_code() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Where things live", 1)[1]
    listed = set(re.findall(r"^  (\w+)/", section.split("```")[1], re.M))
    packages = {
        p.name
        for p in (REPO / "videorl_kit").iterdir()
        if (p / "__init__.py").is_file() and p.name != "adapters"
    }
    assert listed == packages
    stated = section.split("layer by layer: ", 1)[1].split(" (`|`", 1)[0]
    contract = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    layers = contract["tool"]["importlinter"]["contracts"][0]["layers"]
    assert " ".join(stated.replace("`", "").split()) == " → ".join(layers)
