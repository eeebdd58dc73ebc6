"""The code sandbox and the ``code_exec`` verifier, attacked with real child processes.

Every attack runs the real child under the real bubblewrap; "contained" is checked from the
outside (files on disk, a real loopback listener, a real victim process, ``/proc`` of the host),
never by trusting the sandbox's own report. Each test named after an attack keeps that attack
as a regression: it fails if the hole reopens.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from typer.testing import CliRunner

import videorl_kit
from tests.procfs import live_processes
from videorl_kit.cli import app
from videorl_kit.core.errors import UserError
from videorl_kit.core.verifiers import get_verifier
from videorl_kit.rewards import sandbox_command
from videorl_kit.rewards.code import CodeExecParams, CodeExecVerifier, extract_code
from videorl_kit.rewards.sandbox import (
    ChildReport,
    SandboxLimits,
    isolation_problem,
    run_calls,
    run_script,
)

GOLD_SQUARE = json.dumps({"entry_point": "f", "tests": ["assert f(2) == 4", "assert f(-3) == 9"]})
SQUARE = "def f(x):\n    return x * x\n"

# CI installs bubblewrap (.ci/run): there a missing sandbox fails every test instead of skipping.
pytestmark = pytest.mark.skipif(
    isolation_problem("bubblewrap") is not None and not os.environ.get("CI"),
    reason=f"no bubblewrap sandbox here: {isolation_problem('bubblewrap')}",
)


#: The child's source is on its command line (python -c SOURCE), and so on bubblewrap's.
RUNNER_MARK = "What runs inside the code sandbox"


@pytest.fixture(autouse=True)
def no_sandbox_outlives_its_test():
    """After every test, no sandbox process started during it is still alive (from /proc)."""
    started = int(float(Path("/proc/uptime").read_text().split()[0]) * os.sysconf("SC_CLK_TCK"))
    yield
    deadline = time.monotonic() + 3.0
    while True:
        left = [
            p
            for p in live_processes()
            if RUNNER_MARK in p.command and p.started_ticks >= started - 1
        ]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert left == [], [(p.pid, p.command[:80]) for p in left]


def _verifier(timeout_s: float = 2.0, **params) -> CodeExecVerifier:
    return get_verifier("code_exec").create({"timeout_s": timeout_s, **params})


def _square_with(prelude: str, body: str = "") -> str:
    """A correct ``f`` that first does something else (``body``) when called."""
    return f"{prelude}\ndef f(x):\n{body}\n    return x * x\n"


def _call(code: str, *args, timeout_s: float = 2.0, **options) -> ChildReport:
    """Run ``code`` and call its ``f`` once with ``args``."""
    return run_calls(code, "f", [(args, {})], limits=SandboxLimits(timeout_s=timeout_s), **options)


def _returned(code: str, *args, **options):
    report = _call(code, *args, **options)
    assert report.status == "ran", report
    (result,) = report.results
    assert result.kind == "ok", result
    return result.value


def _assert_nothing_left(report: ChildReport) -> None:
    """No process started for the run is alive, nor any process in their sessions or groups."""
    assert report.pids, report
    assert report.leftover_killed == 0, report
    alive = [
        p
        for p in live_processes()
        if p.pid in report.pids or p.session in report.pids or p.process_group in report.pids
    ]
    assert alive == [], alive


# ------------------------------------------------------------------------------ grading


def test_correct_solution_scores_1_judged_by_returned_values() -> None:
    outcome = _verifier().score(SQUARE, GOLD_SQUARE)
    assert outcome.accuracy == 1.0 and outcome.status == "ok"
    sandbox_details = outcome.details["sandbox"]
    assert sandbox_details["tests_passed"] == 2 and sandbox_details["isolation"] == "bubblewrap"
    assert sandbox_details["judged_by"] == {
        "returned_values": 2,
        "test_process": 0,
        "shared_interpreter": 0,
    }


def test_wrong_solution_scores_0_and_says_what_came_back() -> None:
    outcome = _verifier().score("def f(x):\n    return x + x\n", GOLD_SQUARE)
    assert outcome.accuracy == 0.0 and outcome.status == "ok"
    sandbox_details = outcome.details["sandbox"]
    assert sandbox_details["status"] == "failed"
    assert sandbox_details["tests_passed"] == 1  # f(2) == 4 holds, f(-3) does not
    assert "f(-3) returned -6" in sandbox_details["message"]


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        ("def f(x) return x * x", "syntax_error"),
        ("def g(x):\n    return x * x\n", "missing_entry_point"),
        ("raise ValueError('no')\n", "error"),
        ("f = 3\n", "missing_entry_point"),
    ],
)
def test_code_that_cannot_run_scores_0(answer: str, status: str) -> None:
    outcome = _verifier().score(answer, GOLD_SQUARE)
    assert outcome.accuracy == 0.0 and outcome.status == "ok"
    assert outcome.details["sandbox"]["status"] == status


def test_fenced_code_is_extracted_and_other_languages_ignored() -> None:
    answer = (
        "Run it with:\n```bash\npython solve.py\n```\nThe code:\n```python\n"
        + SQUARE
        + "```\nThat's all."
    )
    assert extract_code(answer) == SQUARE.strip()
    assert _verifier().score(answer, GOLD_SQUARE).accuracy == 1.0
    only_bash = _verifier().score("```bash\necho 4\n```", GOLD_SQUARE)
    assert only_bash.accuracy == 0.0
    assert only_bash.details["reason"] == "no Python code in the answer"


def test_demo_code_under_main_guard_does_not_run() -> None:
    answer = SQUARE + "if __name__ == '__main__':\n    print(f(int(input())))\n"
    assert _verifier().score(answer, GOLD_SQUARE).accuracy == 1.0


def test_future_import_and_printing_still_work() -> None:
    answer = "from __future__ import annotations\n\ndef f(x: int) -> int:\n    print('debug', x)\n"
    answer += "    return x * x\n"
    assert _verifier().score(answer, GOLD_SQUARE).accuracy == 1.0


def test_the_shipped_code_task_forms_are_judged_by_returned_values() -> None:
    """Every template of synth-code (tuples in arguments, float tolerances, lists back)."""
    import random

    from videorl_kit.synth.layout import Canvas
    from videorl_kit.synth.tasks_code import build_code, reference_code

    verifier = _verifier()
    for index in range(5):
        item = build_code(random.Random(index), Canvas(), index)
        gold = json.loads(item.answer)
        outcome = verifier.score(reference_code(gold["entry_point"]), item.answer)
        assert outcome.accuracy == 1.0, outcome.details
        judged_by = outcome.details["sandbox"]["judged_by"]
        assert judged_by["test_process"] == judged_by["shared_interpreter"] == 0
        wrong = verifier.score(f"def {gold['entry_point']}(*args):\n    return None\n", item.answer)
        assert wrong.accuracy == 0.0


@pytest.mark.parametrize(
    "gold",
    [
        "not json",
        "",
        json.dumps({"tests": ["assert f(1) == 1"]}),
        json.dumps({"entry_point": "f"}),
        json.dumps({"entry_point": "f", "tests": []}),
        json.dumps({"entry_point": "class", "tests": ["assert True"]}),
        json.dumps({"entry_point": "f", "tests": ["assert f(1) =="]}),
        json.dumps({"entry_point": "f", "tests": ["assert f(1 / 0) == 1"]}),
        json.dumps({"entry_point": "f", "tests": ["assert f([0] * 10 ** 9) == 1"]}),
        json.dumps(["assert f(1) == 1"]),
    ],
)
def test_unreadable_gold_is_unverifiable(gold: str) -> None:
    outcome = _verifier().score(SQUARE, gold)
    assert outcome.status == "unverifiable" and outcome.accuracy == 0.0


def test_gold_as_json_string_of_json_is_accepted() -> None:
    assert _verifier().score(SQUARE, json.dumps(GOLD_SQUARE)).accuracy == 1.0


# ------------------------------------------------------------------------------ script tests


SCRIPT_GOLD = json.dumps(
    {
        "entry_point": "f",
        "tests": [
            "assert f(2) == 4",
            "for i in range(5):\n    assert f(i) == i * i",
            "try:\n    f('x')\nexcept TypeError:\n    pass\nelse:\n    raise AssertionError",
        ],
    }
)


def test_script_tests_run_in_a_second_child_and_are_recorded() -> None:
    outcome = _verifier().score(SQUARE, SCRIPT_GOLD)
    assert outcome.accuracy == 1.0, outcome.details
    assert outcome.details["sandbox"]["judged_by"] == {
        "returned_values": 1,
        "test_process": 2,
        "shared_interpreter": 0,
    }
    wrong = _verifier().score("def f(x):\n    return 4 if x == 2 else 0\n", SCRIPT_GOLD)
    assert wrong.accuracy == 0.0
    assert "test 1" in wrong.details["sandbox"]["message"]


def test_script_tests_can_be_refused_by_the_spec() -> None:
    outcome = _verifier(script_tests=False).score(SQUARE, SCRIPT_GOLD)
    assert outcome.status == "unverifiable"
    assert "test 1 is not a call of f" in outcome.details["reason"]


@pytest.mark.parametrize(
    "hack",
    [
        "import sys\nsys.exit(0)\n",
        "import os\nos._exit(0)\n",
        "print('pass 0123456789abcdef')\nimport os\nos._exit(0)\n",
        "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'status ran\\npass 0\\nend\\n')\n"
        "    except OSError:\n        pass\nos._exit(0)\n",
        "import atexit, os\natexit.register(lambda: os._exit(0))\ndef f(x):\n    return 0\n",
        "def f(x):\n    raise SystemExit(0)\n",
    ],
    ids=["sys_exit", "os_exit", "printed_marker", "forged_marker", "atexit", "system_exit_in_f"],
)
def test_script_mode_early_exits_and_forged_markers_score_0(hack: str) -> None:
    gold = json.dumps({"entry_point": "f", "tests": ["for i in range(3):\n    assert f(i) == i"]})
    assert _verifier().score(hack, gold).accuracy == 0.0


def test_script_report_needs_this_runs_nonce() -> None:
    report = run_script("", None, ["pass"])
    assert report.script_passed
    forged = run_script(
        "import os\nfor fd in range(3, 64):\n    try:\n"
        "        os.write(fd, b'status ran\\npass 00000000000000000000000000000000\\nend\\n')\n"
        "    except OSError:\n        pass\nos._exit(0)\n",
        None,
        ["assert False"],
    )
    assert not forged.script_passed and forged.status in ("invalid_report", "crashed")


# ------------------------------------------------------------------------------ reward hacking


ALWAYS_EQUAL = (
    "class Anything:\n"
    "    def __eq__(self, other): return True\n"
    "    def __ne__(self, other): return False\n"
    "    def __lt__(self, other): return True\n"
    "    def __le__(self, other): return True\n"
    "    def __gt__(self, other): return True\n"
    "    def __ge__(self, other): return True\n"
    "    def __sub__(self, other): return 0\n"
    "    def __rsub__(self, other): return 0\n"
    "    def __abs__(self): return 0\n"
    "    def __bool__(self): return True\n"
    "    def __hash__(self): return 0\n"
)


@pytest.mark.parametrize(
    ("returned", "test"),
    [
        ("Anything()", "assert f(2) == 4"),
        ("[Anything()]", "assert f(2) == [4]"),
        ("(Anything(), Anything())", "assert f(2) == (4, 5)"),
        ("{'k': Anything()}", "assert f(2) == {'k': 4}"),
        ("Anything()", "assert f(3) in (1, 2)"),
        ("Anything()", "assert abs(f(2) - 1.5) < 1e-6"),
        ("Anything()", "assert f(2) is not None and f(2) >= 4 and f(2) <= 4"),
        ("Eq(0)", "assert f(2) == 4"),
        ("FEq(0.0)", "assert abs(f(2) - 1.5) < 1e-6"),
        ("SEq('')", "assert f(2) == 'four'"),
        ("LEq([])", "assert f(2) == [4]"),
    ],
)
def test_objects_that_lie_about_equality_cannot_cross(returned: str, test: str) -> None:
    code = ALWAYS_EQUAL + (
        "class Eq(int):\n    def __eq__(self, other): return True\n"
        "class FEq(float):\n    def __sub__(self, other): return 0.0\n"
        "    def __eq__(self, other): return True\n"
        "class SEq(str):\n    def __eq__(self, other): return True\n"
        "class LEq(list):\n    def __eq__(self, other): return True\n"
        "    def __iter__(self): return iter([4])\n"
        f"def f(x):\n    return {returned}\n"
    )
    gold = json.dumps({"entry_point": "f", "tests": [test]})
    assert _verifier().score(code, gold).accuracy == 0.0


def test_legitimate_comparisons_still_pass() -> None:
    """Across types as Python allows (2.0 == 2, a list inside a tuple, a generator drawn by
    list()), on the host and in the tests' process, and objects the tests make with the answer's
    own class, used through their methods."""
    code = (
        "class Point:\n    def __init__(self, x):\n        self.x = x\n"
        "    def norm(self):\n        return abs(self.x)\n"
        "def f(kind):\n"
        "    if kind == 'gen':\n        return (i * i for i in range(3))\n"
        "    return {'float': 2.0, 'pair': ([1], 'a')}[kind]\n"
    )
    tests = [
        "assert f('float') == 2",
        "assert f('pair') == ([1], 'a')",
        "assert list(f('gen')) == [0, 1, 4]",
        "assert f('gen') != [0, 1, 4]",
        "for kind, value in [('float', 2), ('pair', ([1], 'a'))]:\n    assert f(kind) == value",
        "assert list(f('gen')) == [0, 1, 4] and Point(-3).norm() == 3 and Point(2).x == 2",
    ]
    outcome = _verifier().score(code, json.dumps({"entry_point": "f", "tests": tests}))
    assert outcome.accuracy == 1.0, outcome.details
    judged_by = outcome.details["sandbox"]["judged_by"]
    assert judged_by == {"returned_values": 4, "test_process": 2, "shared_interpreter": 0}


def test_an_object_of_the_answers_class_never_comes_back_from_a_call() -> None:
    """Judging ``f() == Point(1)`` would be the answer's own ``__eq__``: the call fails, with
    the reason, in every mode."""
    code = (
        "class Point:\n    def __init__(self, x):\n        self.x = x\n"
        "    def __eq__(self, other):\n        return True\n"
        "def f():\n    return Point(1)\n"
    )
    gold = json.dumps({"entry_point": "f", "tests": ["for _ in [0]:\n    assert f() == Point(1)"]})
    for params in ({}, {"shared_interpreter": True}):
        outcome = _verifier(**params).score(code, gold)
        assert outcome.accuracy == 0.0 and outcome.status == "ok"
        assert "not plain data" in outcome.details["sandbox"]["message"]


def test_subclasses_of_plain_types_cross_as_their_value() -> None:
    """A namedtuple, an IntEnum or a str subclass is judged on its value, as Python would."""
    code = (
        "import enum, collections\nPair = collections.namedtuple('Pair', 'a b')\n"
        "class Size(enum.IntEnum):\n    BIG = 4\n"
        "def f(x):\n    return {'pair': Pair(1, 2), 'size': Size.BIG}\n"
    )
    gold = json.dumps({"entry_point": "f", "tests": ["assert f(0) == {'pair': (1, 2), 'size': 4}"]})
    assert _verifier().score(code, gold).accuracy == 1.0


def test_forged_pass_through_traceback_frames_and_harness_state_scores_0() -> None:
    """The old harness kept a mutable record of passed tests reachable from frames; now the
    child holds no verdict at all: walking every frame and object finds no expected value."""
    secret = f"SECRET-{uuid.uuid4().hex}"
    gold = json.dumps({"entry_point": "f", "tests": [f"assert f(1) == {secret!r}"]})
    hunter = (
        "import gc, re, sys\n"
        "PATTERN = re.compile('SEC' 'RET-[0-9a-f]{32}')\n"
        "def f(x):\n"
        "    try:\n        raise RuntimeError\n    except RuntimeError as exc:\n"
        "        frame = exc.__traceback__.tb_frame\n"
        "    seen = []\n"
        "    while frame is not None:\n"
        "        seen.append(repr(frame.f_locals))\n        frame = frame.f_back\n"
        "    seen += [repr(o)[:100000] for o in gc.get_objects() if isinstance(o, (dict, list))]\n"
        "    for text in seen:\n"
        "        found = PATTERN.search(text)\n"
        "        if found:\n            return found.group()\n"
        "    return 'nothing found'\n"
    )
    outcome = _verifier().score(hunter, gold)
    assert outcome.accuracy == 0.0
    assert "nothing found" in outcome.details["sandbox"]["message"]


def test_clearing_or_patching_the_runner_through_sys_modules_scores_0() -> None:
    patcher = (
        "import sys\n"
        "runner = sys.modules['__main__']\n"
        "runner.encode_value = lambda value, **kw: '4'\n"
        "for name in list(sys.modules):\n"
        "    if name not in ('sys', 'builtins'):\n"
        "        sys.modules.pop(name, None)\n"
        "def f(x):\n    return 0\n"
    )
    gold = json.dumps({"entry_point": "f", "tests": ["assert f(2) == 5"]})
    assert _verifier().score(patcher, gold).accuracy == 0.0


@pytest.mark.parametrize(
    "hack",
    [
        "import sys\nsys.exit(0)\n",
        "import os\nos._exit(0)\n",
        "raise SystemExit(0)\n",
        "import os\ndef f(x):\n    os._exit(0)\n",
        "print('started\\nstatus ran\\nresult ok 4\\nresult ok 9\\nend')\n"
        "def f(x):\n    return 0\n",
        "import _thread\ndef f(x):\n    _thread.interrupt_main()\n    return x * x\n",
        "import os, signal\ndef f(x):\n    os.kill(os.getpid(), signal.SIGKILL)\n",
        # the old harness's pass markers are plain audit events now: nobody listens
        "import sys\nfor i in range(5):\n    sys.audit('videorl.pass', i)\ndef f(x):\n    return 0\n",
    ],
    ids=[
        "sys_exit",
        "os_exit",
        "system_exit",
        "exit_in_f",
        "printed_report",
        "interrupt",
        "kill",
        "fake_marks",
    ],
)
def test_early_exits_printed_reports_and_crashes_score_0(hack: str) -> None:
    assert _verifier().score(hack, GOLD_SQUARE).accuracy == 0.0


def test_replacing_the_process_with_exec_scores_0_and_leaves_nothing() -> None:
    code = (
        "import os, sys\ndef f(x):\n"
        "    os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(30)'])\n"
    )
    report = _call(code, 2, timeout_s=1.0)
    assert report.status == "timeout"
    _assert_nothing_left(report)


@pytest.mark.parametrize(
    "payload",
    [b"started\nstatus ran\nresult ok 4\nresult ok 9\nend\n", b"\x00garbage\n" * 1000],
    ids=["imitated_report", "garbage"],
)
def test_writing_to_every_inherited_descriptor_gives_no_result(payload: bytes) -> None:
    """Output that imitates the result channel, or garbage, written everywhere it can go, only
    breaks the real report: the correct values the code returns afterwards do not count."""
    code = (
        "import os\ndef f(x):\n    for fd in range(1024):\n        try:\n"
        f"            os.write(fd, {payload!r})\n        except OSError:\n"
        "            pass\n    return x * x\n"
    )
    outcome = _verifier().score(code, GOLD_SQUARE)
    assert outcome.accuracy == 0.0
    assert outcome.details["sandbox"]["status"] == "invalid_report"


# ------------------------------------------------------------------------------ escapes


def test_process_creation_is_refused_even_as_root_and_nothing_is_left() -> None:
    attacks = [
        "import os\n    os.fork()",
        "import subprocess, sys\n    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])",
        "import multiprocessing\n    multiprocessing.Process(target=print).start()",
        "import os, sys\n    os.posix_spawn(sys.executable, ['python', '-c', 'pass'], {})",
        "import pty\n    pty.fork()",
        "import os\n    assert os.system('sleep 30 &') == 0",
        # the old escape: a C extension under a dotted alias handing out fork_exec
        "import importlib, sys\n    alias = importlib.import_module('_posixsubprocess')\n"
        "    sys.modules['x.y'] = alias\n    r, w = __import__('os').pipe()\n"
        "    alias.fork_exec([sys.executable], [sys.executable.encode()], True, (), None, None,"
        " -1, -1, -1, -1, -1, -1, r, w, True, False, 0, None, None, None, -1, None, False)",
        "import ctypes\n    libc = ctypes.CDLL(None, use_errno=True)\n"
        "    assert libc.fork() >= 0 and libc.syscall(57) >= 0, ctypes.get_errno()",
    ]
    for attack in attacks:
        report = _call(_square_with("", "    " + attack), 2)
        assert report.status == "ran", (attack, report)
        assert report.results[0].kind == "raised", (attack, report.results)
        _assert_nothing_left(report)


def test_fork_bomb_scores_0_and_leaves_no_process() -> None:
    bomb = "import os\ndef f(x):\n    while True:\n        try:\n            os.fork()\n"
    bomb += "        except OSError:\n            pass\n"
    outcome = _verifier(timeout_s=1.0).score(bomb, GOLD_SQUARE)
    assert outcome.accuracy == 0.0
    assert outcome.details["sandbox"]["status"] == "timeout"
    report = _call(bomb, 1, timeout_s=1.0)
    assert report.status == "timeout"
    _assert_nothing_left(report)


def test_thread_bomb_is_refused_and_killed() -> None:
    bomb = (
        "import threading, time\ndef f(x):\n    while True:\n"
        "        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
    )
    report = _call(bomb, 1, timeout_s=1.0)
    assert report.status == "ran" and report.results[0].kind == "raised"  # no thread at all
    _assert_nothing_left(report)


def test_root_shell_and_host_files_are_out_of_reach() -> None:
    """No shell, no /proc, no /etc: what a root shell would have read is not there."""
    probes = (
        "import os\ndef f():\n    found = {}\n"
        "    for path in ['/bin/sh', '/usr/bin/env', '/etc/passwd', '/etc/shadow', '/proc/1/environ',"
        " '/proc/self/environ', '/sys', '/tmp', '/home', '/var', PARENT_ENV, REPO]:\n"
        "        found[path] = os.path.exists(path)\n"
        "    return found\n"
    )
    repo = str(Path(videorl_kit.__file__).resolve().parents[1])
    code = probes.replace("PARENT_ENV", repr(f"/proc/{os.getpid()}/environ")).replace(
        "REPO", repr(repo)
    )
    found = _returned(code)
    assert not any(found.values()), found


def test_stat_and_readlink_see_only_the_minimal_root() -> None:
    code = (
        "import os\ndef f():\n"
        "    return sorted(os.listdir('/')), sorted(os.listdir('/dev')), os.listdir('/work'),"
        " os.getuid(), os.getgid(), os.getpid()\n"
    )
    root, dev, work, uid, gid, pid = _returned(code)
    assert set(root) <= {"usr", "lib", "lib64", "lib32", "libx32", "dev", "work", "root", "opt"}
    assert {"etc", "proc", "sys", "tmp", "home", "var", "bin", "sbin"}.isdisjoint(root)
    assert set(dev) <= {"null", "zero", "random", "urandom"}
    assert work == [] and (uid, gid, pid) == (65534, 65534, 1)


def test_scorer_environment_secrets_are_not_visible(monkeypatch) -> None:
    secret = f"s3cr3t-{uuid.uuid4().hex}"
    monkeypatch.setenv("VIDEORL_TEST_SECRET", secret)
    code = "import os\ndef f():\n    return dict(os.environ)\n"
    env = _returned(code)
    assert secret not in json.dumps(env)
    allowed = {"PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "PWD", "PYTHONHASHSEED", "PYTHONUTF8"}
    assert set(env) <= allowed
    gold = json.dumps({"entry_point": "f", "tests": [f"assert f() == {secret!r}"]})
    leak = f"import os\ndef f():\n    return open('/proc/{os.getppid()}/environ').read()\n"
    assert _verifier().score(leak, gold).accuracy == 0.0


def test_killing_the_scorer_or_a_host_process_is_impossible() -> None:
    """pidfd_open + pidfd_send_signal, kill(-1), kill(0), kill(ppid): none reaches the host."""
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for attack in [
            f"import os, signal\n    fd = os.pidfd_open({victim.pid})\n"
            "    signal.pidfd_send_signal(fd, signal.SIGKILL)",
            f"import os, signal\n    fd = os.pidfd_open({os.getpid()})\n"
            "    signal.pidfd_send_signal(fd, signal.SIGKILL)",
            f"import os\n    os.kill({victim.pid}, 9)",
            f"import os\n    os.kill({os.getpid()}, 9)",
            "import os\n    os.kill(os.getppid(), 9)",
            "import os\n    os.kill(-1, 9)",
        ]:
            report = _call(_square_with("", "    " + attack), 2)
            assert report.status in ("ran", "crashed"), (attack, report)
            assert victim.poll() is None, attack
            _assert_nothing_left(report)
    finally:
        victim.kill()
        victim.wait()


def test_priority_and_affinity_of_the_scorer_cannot_change() -> None:
    me = os.getpid()
    before = (os.getpriority(os.PRIO_PROCESS, me), os.sched_getaffinity(me))
    attacks = [
        f"import os\n    os.setpriority(os.PRIO_PROCESS, {me}, 19)",
        f"import os\n    os.setpriority(os.PRIO_PGRP, {os.getpgid(me)}, 19)",
        "import os\n    os.setpriority(os.PRIO_USER, 0, 19)",
        f"import os\n    os.sched_setaffinity({me}, {{0}})",
    ]
    for attack in attacks:
        report = _call(_square_with("", "    " + attack + "\n    return 0"), 2)
        assert report.status == "ran", report
    assert (os.getpriority(os.PRIO_PROCESS, me), os.sched_getaffinity(me)) == before


@pytest.mark.parametrize(
    "attack",
    [
        "os.mkfifo('/work/fifo')",
        "os.mknod('/work/node')",
        "os.mknod('/work/dev', 0o600 | stat.S_IFCHR, os.makedev(1, 3))",
        "os.chroot('/work')",
        "import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM)",
        "import socket; socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)",
        "import ctypes; libc = ctypes.CDLL(None, use_errno=True);"
        " assert libc.ptrace(0, 0, 0, 0) == 0, 'ptrace'",
        "import ctypes; libc = ctypes.CDLL(None, use_errno=True);"
        " assert libc.syscall(310, 1, 0, 0, 0, 0, 0) >= 0, 'process_vm_readv'",
        "import ctypes; libc = ctypes.CDLL(None, use_errno=True);"
        " assert libc.unshare(0x10000000) == 0, 'unshare'",
        "import ctypes; libc = ctypes.CDLL(None, use_errno=True);"
        " assert libc.mount(b'none', b'/work', b'tmpfs', 0, None) == 0, 'mount'",
        "import ctypes; libc = ctypes.CDLL(None, use_errno=True);"
        " assert libc.syscall(425, 8, 0) >= 0, 'io_uring_setup'",
        "import ctypes; libc = ctypes.CDLL(None, use_errno=True);"
        " assert libc.syscall(250, 0, -4, 0, 0, 0) >= 0, 'keyctl'",
        "import ctypes; libc = ctypes.CDLL(None, use_errno=True);"
        " assert libc.syscall(323, 0) >= 0, 'userfaultfd'",
        "open('/usr/lib/planted', 'w')",
        "open('/dev/planted', 'w')",
        "open('/planted', 'w')",
    ],
)
def test_file_system_and_kernel_interfaces_are_refused(attack: str) -> None:
    report = _call(_square_with("import os, stat", "    " + attack), 2)
    assert report.status == "ran", report
    assert report.results[0].kind == "raised", report.results
    _assert_nothing_left(report)


@pytest.mark.parametrize(
    "writer",
    [
        "    open(TARGET, 'w').write('escaped')",
        "    import os\n    os.close(os.open(TARGET, os.O_WRONLY | os.O_CREAT))",
        "    import pathlib\n    pathlib.Path(TARGET).write_text('escaped')",
        "    import os\n    open(os.path.relpath(TARGET), 'w').write('escaped')",
        "    import os\n    os.chdir(os.path.dirname(TARGET))\n"
        "    open(os.path.basename(TARGET), 'w').write('x')",
        "    import os\n    open('inside', 'w').write('x')\n    os.rename('inside', TARGET)",
        "    import shutil\n    open('inside', 'w').write('x')\n    shutil.copy('inside', TARGET)",
        "    import os\n    os.symlink(os.path.dirname(TARGET), 'link')\n"
        "    open('link/' + os.path.basename(TARGET), 'w').write('x')",
        "    import os\n    fd = os.open(os.path.dirname(TARGET), os.O_RDONLY)\n"
        "    os.close(os.open(os.path.basename(TARGET), os.O_WRONLY | os.O_CREAT, dir_fd=fd))",
        "    import os, sys\n    fd = os.open(sys.path[1], os.O_RDONLY)\n"
        "    os.close(os.open('videorl_planted.py', os.O_WRONLY | os.O_CREAT, dir_fd=fd))",
    ],
    ids=[
        "open",
        "os_open",
        "pathlib",
        "relative",
        "chdir",
        "rename",
        "shutil",
        "symlink",
        "dir_fd",
        "dir_fd_stdlib",
    ],
)
def test_writing_outside_the_workdir_scores_0_and_creates_nothing(writer: str) -> None:
    target = f"/tmp/escape_{uuid.uuid4().hex}"
    code = _square_with(f"TARGET = {target!r}", writer)
    try:
        assert _verifier().score(code, GOLD_SQUARE).accuracy == 0.0
        assert not os.path.exists(target)
        assert not (Path(sysconfig.get_paths()["stdlib"]) / "videorl_planted.py").exists()
    finally:
        if os.path.exists(target):
            os.unlink(target)


def test_writing_inside_the_workdir_is_allowed_and_the_workdir_starts_empty() -> None:
    code = _square_with(
        "import os",
        "    assert os.listdir('.') in ([], ['scratch.txt'])\n"
        "    with open('scratch.txt', 'w') as handle:\n        handle.write(str(x))\n"
        "    assert open('scratch.txt').read() == str(x)",
    )
    assert _verifier().score(code, GOLD_SQUARE).accuracy == 1.0


def test_the_weak_mode_removes_its_temporary_directories(tmp_path: Path, monkeypatch) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    weak = _verifier(isolation="subprocess")
    assert weak.score(
        _square_with("", "    open('left.txt', 'w').write('x')"), GOLD_SQUARE
    ).accuracy
    assert weak.score("while True: pass", GOLD_SQUARE).accuracy == 0.0
    assert list(tmp_path.iterdir()) == []


def test_network_is_refused_and_a_host_listener_never_sees_a_connection() -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.3)
    port = server.getsockname()[1]
    try:
        attacks = [
            "    import socket\n    socket.create_connection(('127.0.0.1', PORT), timeout=1)",
            "    import _socket\n    s = _socket.socket()\n    s.connect(('127.0.0.1', PORT))",
            "    import urllib.request\n    urllib.request.urlopen(f'http://127.0.0.1:{PORT}/')",
            "    import ctypes\n    libc = ctypes.CDLL(None, use_errno=True)\n"
            "    assert libc.socket(2, 1, 0) >= 0, 'raw socket'",
        ]
        for attack in attacks:
            outcome = _verifier().score(_square_with(f"PORT = {port}", attack), GOLD_SQUARE)
            assert outcome.accuracy == 0.0, attack
        with pytest.raises(TimeoutError):
            server.accept()  # nobody ever connected
    finally:
        server.close()


def test_filling_the_disk_stops_at_the_private_tmpfs() -> None:
    """Many 4 MB files: the child's private, size-bounded /work fills up (ENOSPC); it is a
    tmpfs of its own mount namespace, so no host file system receives a byte."""
    import errno

    filler = (
        "import os\ndef f():\n    written = 0\n"
        "    for i in range(1000):\n        try:\n"
        "            with open(f'/work/{i}', 'wb') as out:\n"
        "                out.write(b'x' * (4 * 1024 * 1024))\n"
        "            written += 1\n"
        "        except OSError as exc:\n            return written, exc.errno\n"
        "    return written, 0\n"
    )
    written, errno_code = _returned(filler)
    assert errno_code == errno.ENOSPC
    assert written * 4 * 1024 * 1024 <= SandboxLimits().tmp_bytes


def test_many_small_files_and_a_full_tmpfs_end_within_the_time_limit() -> None:
    filler = (
        "import os\ndef f(x):\n    i = 0\n    while True:\n"
        "        try:\n            open(f'/work/{i}', 'w').close()\n"
        "        except OSError:\n            pass\n        i += 1\n"
    )
    started = time.monotonic()
    report = _call(filler, 1, timeout_s=1.0)
    assert report.status == "timeout" and time.monotonic() - started < 5
    _assert_nothing_left(report)


def test_reading_other_processes_memory_and_ptrace_are_refused() -> None:
    code = (
        "import ctypes\ndef f():\n    libc = ctypes.CDLL(None, use_errno=True)\n"
        "    results = [libc.ptrace(16, 1, 0, 0), libc.syscall(310, 1, 0, 0, 0, 0, 0),"
        " libc.syscall(438, 0, 0, 0)]\n"
        "    return results, ctypes.get_errno()\n"
    )
    results, errno_code = _returned(code)
    assert all(r == -1 for r in results) and errno_code == 1  # EPERM


def test_inherited_descriptors_are_only_the_childs_own_pipes() -> None:
    code = (
        "import os, stat\ndef f():\n    found = []\n    for fd in range(1024):\n"
        "        try:\n            mode = os.fstat(fd).st_mode\n        except OSError:\n"
        "            continue\n        found.append((fd, stat.S_ISFIFO(mode)))\n    return found\n"
    )
    found = _returned(code)
    assert len(found) == 4 and all(is_pipe for _, is_pipe in found), found


def test_swapping_the_result_descriptor_gives_no_result() -> None:
    code = (
        "import os\ndef f(x):\n    r, w = os.pipe()\n"
        "    for fd in range(3, 64):\n        if fd not in (r, w):\n            try:\n"
        "                os.dup2(w, fd)\n            except OSError:\n                pass\n"
        "    return x * x\n"
    )
    assert _verifier().score(code, GOLD_SQUARE).accuracy == 0.0


def test_huge_output_and_huge_results_are_bounded() -> None:
    flood = "import sys\ndef f(x):\n    for _ in range(2 * 10 ** 4):\n        print('x' * 1000)\n"
    flood += "    return x * x\n"
    report = _call(flood, 2, timeout_s=5.0)
    assert report.status == "ran" and len(report.stdout) <= SandboxLimits().max_output_bytes
    big = _call("def f(x):\n    return 'x' * (64 * 1024 * 1024)\n", 2)
    assert big.status == "ran" and big.results[0].kind == "unencodable"
    endless = _call("import itertools\ndef f(x):\n    return itertools.count()\n", 2)
    assert endless.status == "ran" and endless.results[0].kind == "unencodable"
    gold = json.dumps({"entry_point": "f", "tests": ["assert len(f(2)) == 67108864"]})
    assert _verifier().score("def f(x):\n    return 'x' * (64 * 1024 * 1024)\n", gold).accuracy == 0


def test_deeply_nested_results_are_refused_on_both_sides() -> None:
    deep = "def f(x):\n    v = []\n    for _ in range(100000):\n        v = [v]\n    return v\n"
    report = _call(deep, 1)
    assert report.status == "ran" and report.results[0].kind == "unencodable"
    forged = (
        "import os\ndef f(x):\n    line = b'result ok ' + b'[' * 200000 + b']' * 200000\n"
        "    for fd in range(3, 64):\n        try:\n"
        "            os.write(fd, b'status ran\\n' + line + b'\\nend\\n')\n"
        "        except OSError:\n            pass\n    os._exit(0)\n"
    )
    report = _call(forged, 1)
    assert report.status in ("invalid_report", "crashed")


def test_symlinks_in_the_weak_mode_workdir_do_not_make_cleanup_delete_host_files(
    tmp_path: Path,
) -> None:
    """Time-of-check race on cleanup: the host removes the subprocess workdir without following
    the links the code left there."""
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "precious.txt").write_text("keep me")
    code = (
        f"import os\ndef f(x):\n    os.symlink({str(keep)!r}, 'link')\n"
        f"    os.symlink({str(keep / 'precious.txt')!r}, 'file')\n    return x * x\n"
    )
    report = _call(code, 2, isolation="subprocess")
    assert report.status == "ran"
    assert (keep / "precious.txt").read_text() == "keep me"


def test_gil_holding_computation_is_killed_at_the_deadline() -> None:
    started = time.monotonic()
    report = _call("x = 10 ** (10 ** 9)\ndef f(x):\n    return x\n", 1, timeout_s=1.0)
    assert report.status == "timeout"
    assert time.monotonic() - started < 1.0 + 3.0
    _assert_nothing_left(report)


@pytest.mark.parametrize(
    "bomb",
    [
        "    data = bytearray(10 ** 10)",
        "    data = [0] * (10 ** 9)",
        "    s = 'x'\n    while True:\n        s = s + s",
    ],
    ids=["bytearray", "list", "doubling"],
)
def test_memory_bomb_scores_0(bomb: str) -> None:
    outcome = _verifier().score(_square_with("", bomb), GOLD_SQUARE)
    assert outcome.accuracy == 0.0
    assert outcome.details["sandbox"]["status"] in ("failed", "crashed", "timeout")


def test_limits_are_applied_in_the_child() -> None:
    code = (
        "import resource\ndef f():\n"
        "    return [resource.getrlimit(getattr(resource, n)) for n in"
        " ('RLIMIT_AS', 'RLIMIT_CPU', 'RLIMIT_NOFILE', 'RLIMIT_NPROC', 'RLIMIT_CORE',"
        " 'RLIMIT_FSIZE')]\n"
    )
    assert _returned(code) == [
        (512 * 2**20,) * 2,
        (4, 4),
        (64, 64),
        (1, 1),
        (0, 0),
        (4 * 2**20,) * 2,
    ]
    raised = _call(
        "import resource\ndef f(x):\n    resource.setrlimit(resource.RLIMIT_CPU, (100, 100))\n", 1
    )
    assert raised.results[0].kind == "raised"


def test_infinite_loop_scores_0_within_the_timeout() -> None:
    started = time.monotonic()
    outcome = _verifier(timeout_s=1.0).score(
        "def f(x):\n    while True:\n        pass\n", GOLD_SQUARE
    )
    assert outcome.accuracy == 0.0 and outcome.details["sandbox"]["status"] == "timeout"
    assert time.monotonic() - started < 1.0 + 3.0


# ------------------------------------------------------------------------------ isolation


def test_missing_isolation_is_refused_with_one_line_unless_opted_out(
    monkeypatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(sandbox_command, "bwrap_path", lambda: None)
    isolation_problem.cache_clear()
    try:
        with pytest.raises(UserError) as info:
            get_verifier("code_exec").create({})
        message = str(info.value)
        assert "\n" not in message and "bubblewrap" in message
        assert "isolation: subprocess" in message
        lines = tmp_path / "lines.jsonl"
        row = {"problem_type": "code", "response": SQUARE, "answer": GOLD_SQUARE}
        lines.write_text(json.dumps(row) + "\n")
        result = CliRunner().invoke(app, ["reward", "score", str(lines), "--json"])
        assert result.exit_code == 1 and isinstance(result.exception, UserError)  # one line
        weak = get_verifier("code_exec").create({"isolation": "subprocess"})
        outcome = weak.score(SQUARE, GOLD_SQUARE)
        assert outcome.accuracy == 1.0
        assert outcome.details["sandbox"]["isolation"] == "subprocess"
    finally:
        isolation_problem.cache_clear()


def test_the_weak_mode_still_decides_the_verdict_on_the_host() -> None:
    weak = _verifier(isolation="subprocess")
    assert weak.score(SQUARE, GOLD_SQUARE).accuracy == 1.0
    assert (
        weak.score(ALWAYS_EQUAL + "def f(x):\n    return Anything()\n", GOLD_SQUARE).accuracy == 0
    )
    assert weak.score("import os\nos._exit(0)\n", GOLD_SQUARE).accuracy == 0.0


NON_ROOT_PROBE = """
import json, sys
from videorl_kit.rewards.sandbox import isolation_problem, run_calls
problem = isolation_problem("bubblewrap")
ok = run_calls("def f(x):\\n    return x * x\\n", "f", [((3,), {})])
fork = run_calls("import os\\ndef f():\\n    return os.fork()\\n", "f", [((), {})])
ident = run_calls("import os\\ndef f():\\n    return os.getuid()\\n", "f", [((), {})])
print(json.dumps([problem, ok.results[0].value, fork.results[0].kind, ident.results[0].value]))
"""


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_bubblewrap_also_works_for_an_unprivileged_scorer() -> None:
    """As a normal user (here: nobody, with the system's python3), the same sandbox runs."""
    import tempfile

    system_python = shutil.which("python3", path="/usr/bin:/bin")
    if system_python is None:
        pytest.skip("no system python3 an unprivileged user can run")
    with tempfile.TemporaryDirectory(dir="/tmp") as shared:
        _run_non_root_probe(system_python, Path(shared))


def _run_non_root_probe(system_python: str, tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    shutil.copytree(
        Path(videorl_kit.__file__).parent,
        package / "videorl_kit",
        ignore=shutil.ignore_patterns("__pycache__", "adapters"),
    )
    for path in [tmp_path, *tmp_path.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    result = subprocess.run(
        [system_python, "-c", NON_ROOT_PROBE],
        user=65534,
        group=65534,
        extra_groups=[],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PYTHONPATH": str(package), "PATH": "/usr/bin:/bin"},
    )
    if result.returncode != 0 and "ModuleNotFoundError" in result.stderr:
        pytest.skip(f"the sandbox module does not import here: {result.stderr[-200:]}")
    assert result.returncode == 0, result.stderr
    problem, value, fork_kind, uid = json.loads(result.stdout)
    assert problem is None and value == 9 and fork_kind == "raised" and uid == 65534


# ------------------------------------------------------------------------------ properties


def test_works_from_worker_threads_concurrently() -> None:
    answers = [SQUARE, "def f(x):\n    return x + x\n"] * 4
    verifier = _verifier()
    with ThreadPoolExecutor(max_workers=4) as pool:
        scores = list(pool.map(lambda a: verifier.score(a, GOLD_SQUARE).accuracy, answers))
    assert scores == [1.0, 0.0] * 4
    seen: list[float] = []
    thread = threading.Thread(
        target=lambda: seen.append(verifier.score(SQUARE, GOLD_SQUARE).accuracy)
    )
    thread.start()
    thread.join()
    assert seen == [1.0]


def test_verifier_and_limits_are_picklable() -> None:
    verifier = CodeExecVerifier(CodeExecParams(timeout_s=3, memory_mb=256))
    clone = pickle.loads(pickle.dumps(verifier))
    assert clone.params == verifier.params
    assert clone.score(SQUARE, GOLD_SQUARE).accuracy == 1.0
    limits = SandboxLimits(timeout_s=2, memory_mb=128)
    assert pickle.loads(pickle.dumps(limits)) == limits


def test_set_order_is_deterministic_across_runs() -> None:
    code = "def f():\n    return list({'apple', 'banana', 'cherry', 'date', 'elder'})\n"
    assert len({tuple(_returned(code)) for _ in range(3)}) == 1


def test_never_raises_on_odd_answers() -> None:
    verifier = _verifier()
    for answer in ["", "\x00\x01", "<|video_pad|>" * 100, "```", "```python", "é" * 10_000]:
        outcome = verifier.score(answer, GOLD_SQUARE)
        assert outcome.accuracy == 0.0 and outcome.status == "ok"


def test_params_are_validated_and_versions_1_and_2_are_gone() -> None:
    info = get_verifier("code_exec", version=3)
    with pytest.raises(ValueError, match="timeout_s"):
        info.create({"timeout_s": 0})
    with pytest.raises(ValueError, match=r"unknown_key|extra"):
        info.create({"unknown_key": 1})
    with pytest.raises(ValueError, match="isolation"):
        info.create({"isolation": "none"})
    with pytest.raises(ValueError, match="call_timeout_s"):
        info.create({"call_timeout_s": 0})
    with pytest.raises(LookupError, match="no version 1"):
        get_verifier("code_exec", version=1)
    with pytest.raises(LookupError, match=r"no version 2.*could be forged"):
        get_verifier("code_exec", version=2)


def test_a_dead_scorer_takes_its_sandbox_with_it() -> None:
    """--die-with-parent: killing the scoring process mid-run leaves no sandbox behind."""
    repo = str(Path(videorl_kit.__file__).resolve().parents[1])
    code = "import time\ndef f():\n    time.sleep(60)\n"
    script = (
        f"import sys\nsys.path.insert(0, {repo!r})\n"
        "from videorl_kit.rewards.sandbox import run_calls\n"
        f"run_calls({code!r}, 'f', [((), {{}})], limits=__import__("
        "'videorl_kit.rewards.sandbox').rewards.sandbox.SandboxLimits(timeout_s=60))\n"
    )
    scorer = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    try:
        sandboxed: list[int] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(sandboxed) < 2:
            processes = live_processes()
            parents = {p.pid: p.parent for p in processes}
            sandboxed = [p.pid for p in processes if _descends_from(p.pid, scorer.pid, parents)]
            time.sleep(0.05)
        assert len(sandboxed) >= 2, "the scorer never started bubblewrap and its child"
        time.sleep(0.3)
        os.killpg(scorer.pid, signal.SIGKILL)
        scorer.wait()
        deadline = time.monotonic() + 5
        alive = {p.pid for p in live_processes()} & set(sandboxed)
        while alive and time.monotonic() < deadline:
            time.sleep(0.05)
            alive = {p.pid for p in live_processes()} & set(sandboxed)
        assert alive == set()
    finally:
        if scorer.poll() is None:
            scorer.kill()
            scorer.wait()


def _descends_from(pid: int, ancestor: int, parents: dict[int, int]) -> bool:
    while pid > 1:
        pid = parents.get(pid, 0)
        if pid == ancestor:
            return True
    return False


def test_the_sandbox_benchmark_runs_end_to_end(capsys) -> None:
    """Smoke test of benchmarks/bench_sandbox.py (no timing assertion)."""
    import importlib.util

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_sandbox.py"
    spec = importlib.util.spec_from_file_location("bench_sandbox", script)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--n", "4", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    forms = ("loop", "humaneval", "unittest")
    assert set(report["ways"]) == {"in_process", "subprocess", "bubblewrap"} | {
        f"{way}_{form}" for way in ("in_process", "bubblewrap") for form in forms
    }
    assert all(way["passed"] == 2 for way in report["ways"].values())  # 2 correct of 4
