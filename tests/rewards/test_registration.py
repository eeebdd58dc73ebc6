"""The bottom layer names no verifier module and no problem type: ``core`` is the mechanism,
``videorl_kit.rewards.registry`` the kit's one registration, found through its entry point.

A link upward that import-linter cannot see is a string naming a module that ``importlib``
imports. No code of ``core`` holds one (docstrings may mention modules), nor the name of a
problem type or built-in verifier: adding a type edits nothing there.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

from videorl_kit.core import problem_types as registry_core
from videorl_kit.core.problem_types import (
    ENTRY_POINT_GROUP,
    ProblemType,
    canonical_problem_type,
    problem_types,
    register_problem_type,
)
from videorl_kit.rewards import registry

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "videorl_kit" / "core"


def code_strings(path: Path) -> list[tuple[int, str]]:
    """String constants of a module's code (docstrings left out), with their lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings]  # fmt: skip


def names_a_module_above_core(text: str) -> bool:
    """``text`` is an import target (``pkg.module`` or ``pkg.module:attr``) outside core."""
    match = re.fullmatch(r"(videorl_kit(?:\.\w+)+)(?::\w+)?", text)
    if not match or match.group(1).startswith("videorl_kit.core"):
        return False
    return importlib.util.find_spec(match.group(1)) is not None


def test_core_code_names_no_module_above_it_and_no_problem_type_or_verifier():
    names = {t.value for t in problem_types()} | {name for name, _ in registry.VERIFIERS}
    found = []
    for path in sorted(CORE.glob("*.py")):
        for line, text in code_strings(path):
            if names_a_module_above_core(text) or text in names:
                found.append(f"{path.relative_to(REPO)}:{line}: {text!r}")
    assert not found, "core names what it should only register:\n" + "\n".join(found)


def test_the_kits_registration_is_found_through_its_entry_point():
    entries = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    assert [(e.name, e.value) for e in entries if e.value.startswith("videorl_kit.")] == [
        ("videorl_kit", "videorl_kit.rewards.registry")
    ]


def test_every_registered_type_is_the_registrations():
    assert [t.value for t in ProblemType] == [name for name, _, _ in registry.PROBLEM_TYPES]
    for name, verifier, aliases in registry.PROBLEM_TYPES:
        assert registry_core.problem_type_info(name).default_verifier == verifier
        assert all(canonical_problem_type(alias).value == name for alias in aliases)


def test_problem_types_read_as_the_enum_they_were():
    numerical = ProblemType.NUMERICAL
    assert numerical is ProblemType("numerical") is canonical_problem_type(" Number ")
    assert numerical == "numerical" and {numerical: 1}["numerical"] == 1
    assert (numerical.value, numerical.name, str(numerical), f"{numerical:>10}") == (
        "numerical", "NUMERICAL", "numerical", " numerical"
    )  # fmt: skip
    assert type(numerical.value) is str
    assert pickle.loads(pickle.dumps(numerical)) is numerical
    assert numerical in ProblemType and "poetry" not in ProblemType
    with pytest.raises(ValueError, match="'poetry' is not a registered problem type"):
        ProblemType("poetry")
    with pytest.raises(AttributeError, match="no problem type 'poetry' is registered"):
        ProblemType.POETRY  # noqa: B018


def test_a_registration_cannot_take_another_types_alias_or_change_a_default():
    with pytest.raises(ValueError, match="alias 'mcq' of 'quiz' already names"):
        register_problem_type("quiz", default_verifier="choice", aliases=["MCQ"])
    with pytest.raises(ValueError, match=r"already registered by videorl_kit\.rewards\.registry"):
        register_problem_type("numerical", default_verifier="mra")
    with pytest.raises(ValueError, match="snake_case"):
        register_problem_type("Bad Name", default_verifier="choice")
    assert "quiz" not in ProblemType


def test_without_installed_metadata_importing_rewards_registers_the_kits_types(tmp_path):
    """A copy of the package alone on ``sys.path`` (no ``*.dist-info``): as on a Ray node."""
    import shutil

    shutil.copytree(REPO / "videorl_kit", tmp_path / "videorl_kit",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    code = (
        "import importlib.metadata as m, sys\n"
        "assert not [d for d in m.distributions() if d.metadata['Name'] == 'videorl-kit']\n"
        "from videorl_kit.core.problem_types import ProblemType, canonical_problem_type\n"
        "try:\n"
        "    canonical_problem_type('numerical')\n"
        "except ValueError as exc:\n"
        "    print('before:', exc)\n"
        "import videorl_kit.rewards\n"
        "from videorl_kit.rewards import reward_function_for\n"
        "print('after:', len(ProblemType), reward_function_for('llava')('<answer>Tie</answer>',"
        " 'Tie').overall)\n"
    )
    done = run_without_kit_metadata(code, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    before, after = done.stdout.splitlines()
    assert "no problem type is registered: install videorl-kit" in before
    assert after == "after: 13 1.0"


def run_without_kit_metadata(
    code: str, path: Path, farm_in: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` with ``path`` first on ``sys.path`` and every installed package but the
    kit's own distribution (its ``*.dist-info`` and editable finder are left out; links to
    the rest are made in ``farm_in``, by default ``path``)."""
    farm = (farm_in or path) / "site"
    farm.mkdir()
    site_dirs = [Path(p) for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    for site in site_dirs:
        for entry in site.iterdir():
            kit = entry.name.startswith(("videorl_kit", "__editable__", "_main_venv"))
            if kit or entry.suffix == ".pth" or (farm / entry.name).exists():
                continue
            (farm / entry.name).symlink_to(entry)
    command = [sys.executable, "-S", "-c", f"import sys; sys.path[:0] = "
               f"[{str(path)!r}, {str(farm)!r}]\n{code}"]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=path)


THIRD_PARTY_REGISTRY = """
from videorl_kit.core.problem_types import register_problem_type
from videorl_kit.core.verifiers import register_verifier_location

register_problem_type("ordering", default_verifier="event_order", aliases=["event ordering"])
register_verifier_location("event_order", 1, "vk_order_tasks.verifier")
"""

THIRD_PARTY_VERIFIER = """
from videorl_kit.core.verifiers import register_verifier
from videorl_kit.rewards.base import VerifyOutcome


@register_verifier(name="event_order", version=1, problem_types=["ordering"])
class EventOrder:
    '''1 when the events are named in the gold's order (test plugin).'''

    def __init__(self, params) -> None:
        self.params = params

    def score(self, answer_text, gold, options=None):
        same = [a.strip() for a in answer_text.split(",")] == [g.strip() for g in gold.split(",")]
        return VerifyOutcome.ok(1.0 if same else 0.0)
"""

USE_THE_PLUGIN = """
import sys
from videorl_kit.core.problem_types import canonical_problem_type, registration_errors
from videorl_kit.core.verifiers import default_verifier_name

ordering = canonical_problem_type("Event Ordering")
print(ordering.value, default_verifier_name(ordering), "vk_order_tasks.verifier" in sys.modules)
from videorl_kit.rewards import reward_function_for

score = reward_function_for("ordering")
print(score("<answer>B, A</answer>", "B, A").overall, score("<answer>A, B</answer>", "B, A").overall)
print(canonical_problem_type("numerical").value, sorted(registration_errors()))
"""


def test_a_package_registers_a_problem_type_through_the_entry_point(tmp_path):
    """A third party adds a type as the kit adds its own: one registration module named under
    the entry-point group, its verifier imported when first asked for; a broken registration
    of another package breaks only itself."""
    package = tmp_path / "vk_order_tasks"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "registry.py").write_text(THIRD_PARTY_REGISTRY, encoding="utf-8")
    (package / "verifier.py").write_text(THIRD_PARTY_VERIFIER, encoding="utf-8")
    (tmp_path / "vk_broken_tasks.py").write_text("raise RuntimeError('boom')\n", "utf-8")
    for dist, entry in (("vk_order_tasks", "order = vk_order_tasks.registry"),
                        ("vk_broken_tasks", "broken = vk_broken_tasks")):  # fmt: skip
        info = tmp_path / f"{dist}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{entry}\n")
    command = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
               f"{USE_THE_PLUGIN}"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "ordering event_order False",  # located, not imported yet
        "1.0 0.1",  # the format reward alone
        "numerical ['broken']",
    ]


SLOW_SHARED = """
import time

from videorl_kit.core.problem_types import register_problem_type

time.sleep(0.5)  # another thread looks a type up meanwhile
register_problem_type("slow_kind", default_verifier="choice")
"""

RACE = """
import os, threading, time
import videorl_kit.rewards  # the kit's own registration, as usual

results = {}


def import_shared():
    import vk_slow_tasks.shared  # holds the import lock of the module, then registers
    results["import"] = "ok"


def look_up():
    from videorl_kit.core.problem_types import canonical_problem_type

    results["look-up"] = canonical_problem_type("slow_kind").value  # loads vk_slow_tasks.reg


first = threading.Thread(target=import_shared, daemon=True)
first.start()
time.sleep(0.1)
second = threading.Thread(target=look_up, daemon=True)
second.start()
for thread in (first, second):
    thread.join(timeout=20)
print(sorted(results.items()), flush=True)
os._exit(0)
"""


def test_a_look_up_while_another_thread_imports_a_registration_does_not_deadlock(tmp_path):
    """The registry's lock is never held while a registration module is imported."""
    package = tmp_path / "vk_slow_tasks"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "shared.py").write_text(SLOW_SHARED, encoding="utf-8")
    (package / "reg.py").write_text("import vk_slow_tasks.shared  # noqa: F401\n", "utf-8")
    info = tmp_path / "vk_slow_tasks-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vk_slow_tasks\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nslow = vk_slow_tasks.reg\n")
    command = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n{RACE}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.stdout.strip() == "[('import', 'ok'), ('look-up', 'slow_kind')]", done.stderr


SLOW_VERIFIER = """
import time

from videorl_kit.core.verifiers import register_verifier
from videorl_kit.rewards.base import VerifyOutcome

time.sleep(0.5)  # another thread asks for the verifier meanwhile


@register_verifier(name="slow_exact", version=1, problem_types=["open_ended"])
class SlowExact:
    '''1 when the answer is the gold (test plugin).'''

    def __init__(self, params) -> None:
        self.params = params

    def score(self, answer_text, gold, options=None):
        return VerifyOutcome.ok(float(answer_text == gold))
"""

VERIFIER_RACE = """
import os, threading, time
from videorl_kit.core.verifiers import get_verifier, register_verifier_location

register_verifier_location("slow_exact", 1, "vk_slow_verifier")
get_verifier("choice")  # the kit's registrations are loaded
results = {}


def import_module():
    import vk_slow_verifier  # holds the import lock of the module, then registers
    results["import"] = "ok"


def look_up():
    results["look-up"] = get_verifier("slow_exact").version


first = threading.Thread(target=import_module, daemon=True)
first.start()
time.sleep(0.1)
second = threading.Thread(target=look_up, daemon=True)
second.start()
for thread in (first, second):
    thread.join(timeout=20)
print(sorted(results.items()), flush=True)
os._exit(0)
"""


def test_asking_for_a_verifier_while_another_thread_imports_it_does_not_deadlock(tmp_path):
    """The verifier registry's lock is not held while a verifier's module is imported."""
    (tmp_path / "vk_slow_verifier.py").write_text(SLOW_VERIFIER, encoding="utf-8")
    code = f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n{VERIFIER_RACE}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)  # fmt: skip
    assert done.stdout.strip() == "[('import', 'ok'), ('look-up', 1)]", done.stderr
