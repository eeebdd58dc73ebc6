"""The layer contract (``[tool.importlinter]`` in pyproject.toml) holds and catches breaks.

import-linter reads the package from disk: the kit as it is, or a copy of it with one
upward import added.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _copy_with(root: Path, module: str, source: str) -> Path:
    """``root/videorl_kit``: a copy of the kit with ``source`` written at ``module``."""
    shutil.copytree(
        REPO / "videorl_kit", root / "videorl_kit", ignore=shutil.ignore_patterns("__pycache__")
    )
    (root / "videorl_kit" / module).write_text(source, encoding="utf-8")
    return root


def _lint(view: Path) -> subprocess.CompletedProcess[str]:
    command = [str(LINT_IMPORTS), "--config", str(REPO / "pyproject.toml"), "--no-cache"]
    env = {"PYTHONPATH": str(view), "PATH": "/usr/bin:/bin"}
    return subprocess.run(command, cwd=view, env=env, capture_output=True, text=True, timeout=300)


def test_the_kit_keeps_its_layers() -> None:
    result = _lint(REPO)
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
    result = _lint(_copy_with(tmp_path, module, source))
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
    late = [
        line
        for path in (REPO / "videorl_kit").rglob("*.py")
        if not str(path).endswith(tuple(LATE_IMPORTS_ALLOWED))
        for line in _late_kit_imports(path)
    ]
    assert not late, "import these at the top of the module:\n" + "\n".join(late)


def test_the_readme_states_the_layout_and_layers_of_the_code() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Where things live", 1)[1]
    listed = set(re.findall(r"^  (\w+)/", section.split("```")[1], re.M))
    packages = {p.name for p in (REPO / "videorl_kit").iterdir() if (p / "__init__.py").is_file()}
    assert listed == packages
    stated = section.split("layer by layer: ", 1)[1].split(" (`|`", 1)[0]
    contract = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    layers = contract["tool"]["importlinter"]["contracts"][0]["layers"]
    assert " ".join(stated.replace("`", "").split()) == " → ".join(layers)
