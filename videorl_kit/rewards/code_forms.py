"""Tests that are not plain calls: which forms are refused, and what is added so that all run.

Such tests (loops over cases, HumanEval's ``def check(candidate): ...``, unittest classes, pytest
style ``def test_...():`` functions) run in a process of their own against a proxy of the
answer's code (:mod:`videorl_kit.rewards.sandbox_proxy`). Before they run, the host reads them:

* **refused forms** (:data:`REFUSED_NAMES`, :data:`REFUSED_MODULES`): a test that could run
  what the code returns *as code* (``eval``, ``exec``, ``compile``, ``__import__``, ``pickle``,
  ``marshal``, ``os``, ``subprocess``, ...), that reads the code's internals (``inspect``,
  ``dis``, ``gc``), its files (``open``: they are in the other process) or names it does not
  hold (``globals()``). Such a ground truth is ``unverifiable`` unless the verifier's params opt
  in to the weaker shared-interpreter mode;
* **tests that would never run** get the call that runs them: a ``def check(candidate)`` that no
  test calls is called with the entry point (HumanEval's harness adds that line), pytest style
  ``test*`` functions that no test calls are called in order, and unittest ``TestCase`` classes
  are run by a runner added after the last test (``unittest.main()`` does nothing, so that no
  test exits the process), which fails unless at least one test ran and all succeeded.

Example:
    >>> plan = plan_script("add", [(0, "def check(candidate):\\n    assert candidate(1, 2) == 3")])
    >>> plan.sources[-1], plan.indices, plan.refusal
    ('check(add)', (0, 0), '')
    >>> plan_script("f", [(3, "assert eval(f('1+1')) == 2")]).refusal
    'test 3 uses eval(), which could run what the code returns as code'
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

#: Names a test may not use in the tests' process, and why (the text follows "uses NAME(), ").
REFUSED_NAMES: dict[str, str] = {
    "eval": "which could run what the code returns as code",
    "exec": "which could run what the code returns as code",
    "compile": "which could run what the code returns as code",
    "__import__": "which could run what the code returns as code",
    "breakpoint": "which could run what the code returns as code",
    "__builtins__": "which could run what the code returns as code",
    "open": "but the code's files are in its own process",
    "globals": "but the code's names are in its own process",
    "locals": "but the code's names are in its own process",
    "vars": "but the code's names are in its own process",
}
#: Modules a test may not import or use in the tests' process (top-level package names).
REFUSED_MODULES: frozenset[str] = frozenset(
    {
        "os", "posix", "subprocess", "pty", "socket", "signal", "ctypes", "importlib", "runpy",
        "code", "codeop", "pickle", "marshal", "shelve", "dill", "inspect", "dis", "gc",
        "builtins", "threading", "_thread", "multiprocessing", "concurrent", "asyncio",
        "resource", "tracemalloc", "faulthandler",
    }
)  # fmt: skip
#: What the verifier's refusal adds: how to opt in, and what that costs.
OPT_IN = (
    "set the verifier param `shared_interpreter: true` to run such tests in the code's own "
    "interpreter (weaker: the code can forge the verdict; docs/verifiers.md)"
)

_UNITTEST_PRELUDE = (
    "import unittest as __vk_unittest\n__vk_unittest.main = lambda *args, **kwargs: None\n"
)
_UNITTEST_RUNNER = """\
__vk_unittest = __import__("unittest")
__vk_suite = __vk_unittest.TestSuite(
    __vk_unittest.defaultTestLoader.loadTestsFromTestCase(case)
    for case in list(globals().values())
    if isinstance(case, type)
    and issubclass(case, __vk_unittest.TestCase)
    and case.__module__ == __name__
)
__vk_result = __vk_unittest.TextTestRunner(stream=__import__("io").StringIO(), verbosity=0).run(
    __vk_suite
)
assert __vk_result.testsRun and __vk_result.wasSuccessful(), (
    [text for _, text in __vk_result.failures + __vk_result.errors] or ["no unittest test ran"]
)[0].strip().splitlines()[-1].partition("Error: ")[2]
"""


@dataclass(frozen=True, slots=True)
class ScriptPlan:
    """What the tests' process runs: ``sources`` in order, each standing for the ground-truth
    test ``indices[i]``; ``refusal`` says why the tests cannot run against a proxy ("" if they
    can)."""

    sources: tuple[str, ...]
    indices: tuple[int, ...]
    refusal: str = ""


def plan_script(entry_point: str, tests: Sequence[tuple[int, str]]) -> ScriptPlan:
    """Read the script tests ``(index, source)`` (they compile): refusal, and what is added.

    Example:
        >>> tests = [(0, "def test_small():\\n    assert f(1) == 1"), (1, "x = 2")]
        >>> plan_script("f", tests).sources[-1]
        'test_small()'
    """
    trees = [(index, ast.parse(source)) for index, source in tests]
    bound = set().union(*(_bound_names(tree) for _, tree in trees))
    refusal = next((r for index, tree in trees if (r := _refusal(index, tree, bound))), "")
    loaded = {
        node.id
        for _, tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    sources = [source for _, source in tests]
    indices = [index for index, _ in tests]
    prelude: list[tuple[int, str]] = []
    for index, tree in trees:
        for statement in tree.body:
            added = _call_to_add(statement, entry_point, loaded)
            if added:
                sources.append(added)
                indices.append(index)
            if _is_test_case(statement) and not prelude:
                prelude.append((index, _UNITTEST_PRELUDE))
            if _is_test_case(statement):
                last_case = index
    if prelude:
        sources = [prelude[0][1], *sources, _UNITTEST_RUNNER]
        indices = [prelude[0][0], *indices, last_case]
    return ScriptPlan(tuple(sources), tuple(indices), refusal)


def _bound_names(tree: ast.Module) -> set[str]:
    """Names a test binds itself (assigned, defined, imported, parameters)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def _refusal(index: int, tree: ast.Module, bound: set[str]) -> str:
    """Why test ``index`` cannot run against a proxy ("" when it can)."""
    for node in ast.walk(tree):
        free = isinstance(node, ast.Name) and node.id not in bound
        if free and node.id in REFUSED_NAMES:
            return f"test {index} uses {node.id}(), {REFUSED_NAMES[node.id]}"
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = [node.module or ""] if not node.level else []
        elif free:
            modules = [node.id]  # a module the test expects the code to have imported
        for module in modules:
            if module.split(".")[0] in REFUSED_MODULES:
                return (
                    f"test {index} uses the module {module.split('.')[0]}, which reaches into "
                    "processes, the code's internals, or runs data as code"
                )
    return ""


def _call_to_add(statement: ast.stmt, entry_point: str, loaded: set[str]) -> str:
    """The call that runs a test function nothing calls ("" if there is none to add)."""
    if not isinstance(statement, ast.FunctionDef) or statement.name in loaded:
        return ""
    arguments = statement.args
    positional = [*arguments.posonlyargs, *arguments.args]
    required = len(positional) - len(arguments.defaults)
    required += sum(default is None for default in arguments.kw_defaults)
    if statement.name == "check" and positional and required <= 1:
        return f"check({entry_point})"
    if statement.name.startswith("test") and required == 0:
        return f"{statement.name}()"
    return ""


def _is_test_case(statement: ast.stmt) -> bool:
    if not isinstance(statement, ast.ClassDef):
        return False
    for base in statement.bases:
        name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
        if name.endswith("TestCase"):
            return True
    return False
