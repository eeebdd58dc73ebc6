"""The code sandbox and the ``code_exec`` verifier, attacked with real subprocesses.

Every attack runs the real child interpreter; "contained" is checked from the outside (files on
disk, a real loopback listener, ``/proc``), not by trusting the sandbox's own report.
"""

from __future__ import annotations

import ast
import json
import os
import pickle
import socket
import sysconfig
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.procfs import live_processes
from videorl_kit.rewards.code import CodeExecParams, CodeExecVerifier, extract_code
from videorl_kit.rewards.registry import get_verifier
from videorl_kit.rewards.sandbox import SandboxLimits, run_python, run_python_tests

GOLD_SQUARE = json.dumps({"entry_point": "f", "tests": ["assert f(2) == 4", "assert f(-3) == 9"]})
SQUARE = "def f(x):\n    return x * x\n"


def _verifier(timeout_s: float = 2.0) -> CodeExecVerifier:
    return get_verifier("code_exec", version=1).create({"timeout_s": timeout_s})


def _square_with(prelude: str, body: str = "") -> str:
    """A correct ``f`` that first does something forbidden (``body``) when called."""
    return f"{prelude}\ndef f(x):\n{body}\n    return x * x\n"


def _processes_in_session(session_id: int) -> list[int]:
    """Live processes of a session or process group, read from /proc (not the sandbox's helper)."""
    return [p.pid for p in live_processes() if session_id in (p.process_group, p.session)]


# ------------------------------------------------------------------------------ basic grading


def test_correct_solution_scores_1() -> None:
    outcome = _verifier().score(SQUARE, GOLD_SQUARE)
    assert outcome.accuracy == 1.0 and outcome.status == "ok"
    assert outcome.details["sandbox"]["tests_passed"] == 2


def test_wrong_solution_scores_0() -> None:
    outcome = _verifier().score("def f(x):\n    return x + x\n", GOLD_SQUARE)
    assert outcome.accuracy == 0.0 and outcome.status == "ok"
    assert outcome.details["sandbox"]["status"] == "failed"
    assert outcome.details["sandbox"]["tests_passed"] == 1  # f(2) == 4 holds, f(-3) does not


def test_syntax_error_scores_0() -> None:
    outcome = _verifier().score("def f(x) return x * x", GOLD_SQUARE)
    assert outcome.accuracy == 0.0 and outcome.status == "ok"
    assert outcome.details["sandbox"]["status"] == "syntax_error"


def test_missing_entry_point_scores_0() -> None:
    outcome = _verifier().score("def g(x):\n    return x * x\n", GOLD_SQUARE)
    assert outcome.accuracy == 0.0
    assert outcome.details["sandbox"]["entry_point_found"] is False


def test_fenced_code_is_extracted_and_other_languages_ignored() -> None:
    answer = (
        "Run it with:\n```bash\npython solve.py\n```\nThe code:\n```python\n"
        + SQUARE
        + "```\nThat's all."
    )
    assert extract_code(answer) == SQUARE.strip()
    assert _verifier().score(answer, GOLD_SQUARE).accuracy == 1.0
    only_bash = _verifier().score("```bash\necho 4\n```", GOLD_SQUARE)
    assert (
        only_bash.accuracy == 0.0 and only_bash.details["reason"] == "no Python code in the answer"
    )


def test_demo_code_under_main_guard_does_not_run() -> None:
    answer = SQUARE + "if __name__ == '__main__':\n    print(f(int(input())))\n"
    assert _verifier().score(answer, GOLD_SQUARE).accuracy == 1.0


def test_future_import_at_the_top_still_works() -> None:
    answer = "from __future__ import annotations\n\ndef f(x: int) -> int:\n    return x * x\n"
    assert _verifier().score(answer, GOLD_SQUARE).accuracy == 1.0


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
        json.dumps(["assert f(1) == 1"]),
    ],
)
def test_unreadable_gold_is_unverifiable(gold: str) -> None:
    outcome = _verifier().score(SQUARE, gold)
    assert outcome.status == "unverifiable" and outcome.accuracy == 0.0


def test_gold_as_json_string_of_json_is_accepted() -> None:
    assert _verifier().score(SQUARE, json.dumps(GOLD_SQUARE)).accuracy == 1.0


# ------------------------------------------------------------------------------ containment


def test_infinite_loop_scores_0_within_the_timeout() -> None:
    started = time.monotonic()
    outcome = _verifier(timeout_s=1.0).score(
        "def f(x):\n    while True:\n        pass\n", GOLD_SQUARE
    )
    elapsed = time.monotonic() - started
    assert outcome.accuracy == 0.0
    assert outcome.details["sandbox"]["status"] == "timeout"
    assert elapsed < 1.0 + 3.0


def test_gil_holding_computation_is_killed_at_the_deadline() -> None:
    started = time.monotonic()
    result = run_python_tests("x = 10 ** (10 ** 9)", [], limits=SandboxLimits(timeout_s=1.0))
    assert result.status == "timeout"
    assert time.monotonic() - started < 1.0 + 3.0
    assert _processes_in_session(result.pid) == []


@pytest.mark.parametrize(
    "attack",
    [
        "import os\n    while True:\n        os.fork()",
        "import os\n    while True:\n        os.posix_spawn('/bin/sleep', ['sleep', '30'], {})",
        "import subprocess\n    subprocess.Popen(['sleep', '30'])",
        "import multiprocessing\n    multiprocessing.Process(target=print).start()",
        "import pty\n    pty.fork()",
        "import os\n    os.system('sleep 30 &')",
        "import os\n    os.execv('/bin/sleep', ['sleep', '30'])",
    ],
    ids=["fork", "posix_spawn", "subprocess", "multiprocessing", "pty", "system", "exec"],
)
def test_process_creation_is_refused_and_nothing_is_left_behind(attack: str) -> None:
    code = "def f(x):\n    " + attack + "\n    return x * x\n"
    result = run_python_tests(
        code, ["assert f(2) == 4"], entry_point="f", limits=SandboxLimits(timeout_s=2)
    )
    assert result.status == "failed", result
    assert "not allowed" in result.message
    assert result.leftover_killed == 0
    assert _processes_in_session(result.pid) == []


def test_fork_bomb_scores_0_and_leaves_no_process() -> None:
    bomb = "import os\ndef f(x):\n    while True:\n        try:\n            os.fork()\n"
    bomb += "        except Exception:\n            pass\n"
    outcome = _verifier(timeout_s=1.0).score(bomb, GOLD_SQUARE)
    assert outcome.accuracy == 0.0
    sandbox = outcome.details["sandbox"]
    assert sandbox["status"] == "timeout"  # it keeps trying until the deadline
    result = run_python_tests(bomb + "f(1)\n", [], limits=SandboxLimits(timeout_s=1.0))
    assert result.status == "timeout"
    assert result.leftover_killed == 0
    assert _processes_in_session(result.pid) == []


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
    # MemoryError (failed), a dead child (crashed) or, when paging is slow, the deadline
    assert outcome.details["sandbox"]["status"] in ("failed", "crashed", "timeout")


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
        outcome = _verifier().score(code, GOLD_SQUARE)
        assert outcome.accuracy == 0.0
        assert not os.path.exists(target)
        assert not (Path(sysconfig.get_paths()["stdlib"]) / "videorl_planted.py").exists()
    finally:
        if os.path.exists(target):
            os.unlink(target)


def test_writing_inside_the_workdir_is_allowed_and_the_workdir_starts_empty() -> None:
    code = _square_with(
        "import os",
        "    assert os.listdir('.') == [] or os.listdir('.') == ['scratch.txt']\n"
        "    with open('scratch.txt', 'w') as handle:\n        handle.write(str(x))\n"
        "    assert open('scratch.txt').read() == str(x)",
    )
    assert _verifier().score(code, GOLD_SQUARE).accuracy == 1.0


def test_temporary_directories_are_removed(tmp_path: Path, monkeypatch) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    code = _square_with("", "    open('leftover.txt', 'w').write('x')")
    assert _verifier().score(code, GOLD_SQUARE).accuracy == 1.0
    assert _verifier().score("while True: pass", GOLD_SQUARE).accuracy == 0.0
    assert list(tmp_path.iterdir()) == []


def test_socket_to_loopback_is_refused_and_never_connects() -> None:
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
        ]
        for attack in attacks:
            outcome = _verifier().score(_square_with(f"PORT = {port}", attack), GOLD_SQUARE)
            assert outcome.accuracy == 0.0, attack
            assert "socket" in outcome.details["sandbox"]["message"], outcome.details
        with pytest.raises(TimeoutError):
            server.accept()  # nobody ever connected
    finally:
        server.close()


def test_parent_environment_secrets_are_not_visible(monkeypatch) -> None:
    secret = f"s3cr3t-{uuid.uuid4().hex}"
    monkeypatch.setenv("VIDEORL_TEST_SECRET", secret)
    gold = json.dumps({"entry_point": "f", "tests": [f"assert f() == {secret!r}"]})
    leaks = [
        "import os\ndef f():\n    return os.environ.get('VIDEORL_TEST_SECRET')\n",
        "import os\ndef f():\n    return os.getenv('VIDEORL_TEST_SECRET')\n",
        "import os\ndef f():\n    raw = open(f'/proc/{os.getppid()}/environ', 'rb').read()\n"
        "    return raw.split(b'VIDEORL_TEST_SECRET=')[1].split(b'\\0')[0].decode()\n",
        "import os\ndef f():\n    raw = open('/proc/self/environ', 'rb').read()\n"
        "    return raw.split(b'VIDEORL_TEST_SECRET=')[1].split(b'\\0')[0].decode()\n",
    ]
    for leak in leaks:
        outcome = _verifier().score(leak, gold)
        assert outcome.accuracy == 0.0, leak
    result = run_python("import os\nprint(sorted(os.environ))")
    assert result.status == "passed"
    assert secret not in result.stdout and "VIDEORL_TEST_SECRET" not in result.stdout
    assert set(ast.literal_eval(result.stdout)) <= {"PATH", "LANG", "LC_ALL", "HOME", "TMPDIR"}


def test_reading_files_outside_the_sandbox_is_refused() -> None:
    result = run_python("open('/etc/hostname').read()")
    assert result.status == "error" and "reading outside the sandbox" in result.message


def test_limits_are_applied_in_the_child() -> None:
    code = (
        "import resource\n"
        "assert resource.getrlimit(resource.RLIMIT_AS) == (256 * 2**20, 256 * 2**20)\n"
        "assert resource.getrlimit(resource.RLIMIT_CPU)[1] == 4\n"
        "assert resource.getrlimit(resource.RLIMIT_NOFILE)[1] == 64\n"
        "assert resource.getrlimit(resource.RLIMIT_NPROC) == (0, 0)\n"
        "assert resource.getrlimit(resource.RLIMIT_CORE) == (0, 0)\n"
    )
    result = run_python(code, SandboxLimits(timeout_s=2, memory_mb=256))
    assert result.status == "passed", result
    raised = run_python("import resource\nresource.setrlimit(resource.RLIMIT_CPU, (100, 100))")
    assert raised.status == "error" and "not allowed" in raised.message


def test_signals_to_other_processes_are_refused() -> None:
    result = run_python("import os, signal\nos.kill(os.getppid(), signal.SIGTERM)")
    assert result.status == "error" and "os.kill is not allowed" in result.message


def test_huge_output_is_capped() -> None:
    result = run_python("import sys\nfor _ in range(10**6):\n    print('x' * 100)\n")
    assert result.status == "error"  # the file-size limit stops it
    assert len(result.stdout) <= SandboxLimits().max_output_bytes


NON_ROOT_PROBE = """
import json
from videorl_kit.rewards.sandbox import run_python, run_python_tests
ok = run_python_tests("def f(x):\\n    return x * x\\n", ["assert f(3) == 9"], entry_point="f")
thread = run_python("import threading\\nt = threading.Thread(target=print)\\nt.start()\\nt.join()")
fork = run_python("import os\\nos.fork()")
print(json.dumps([ok.status, thread.status, thread.message, fork.status]))
"""


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_process_limit_binds_an_unprivileged_user(tmp_path: Path) -> None:
    """As a normal user, RLIMIT_NPROC = 0 stops even thread creation inside the sandbox."""
    import subprocess
    import sys

    import videorl_kit

    package_root = str(Path(videorl_kit.__file__).resolve().parents[1])
    try:
        probe = subprocess.run(
            [sys.executable, "-c", "print('ok')"], user=65534, capture_output=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"cannot run the interpreter as an unprivileged user: {exc}")
    if probe.returncode != 0:
        pytest.skip("the interpreter is not usable by an unprivileged user here")
    result = subprocess.run(
        [sys.executable, "-c", NON_ROOT_PROBE],
        user=65534,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PYTHONPATH": package_root, "PATH": "/usr/bin:/bin"},
    )
    if result.returncode != 0 and "ModuleNotFoundError" in result.stderr:
        pytest.skip("the package is not importable by an unprivileged user here")
    assert result.returncode == 0, result.stderr
    ok, thread_status, thread_message, fork_status = json.loads(result.stdout)
    assert ok == "passed"
    assert thread_status == "error" and "thread" in thread_message
    assert fork_status == "error"


# ------------------------------------------------------------------------------ reward hacking


@pytest.mark.parametrize(
    "hack",
    [
        "import sys\nsys.exit(0)\n",
        "import os\nos._exit(0)\n",
        "raise SystemExit(0)\n",
        "print('videorl-sandbox-result ok')\nimport os\nos._exit(0)\n",
        "import sys\nfor i in range(5):\n    sys.audit('videorl.pass', i)\n"
        "def f(x):\n    return 0\n",
        "import sys\ndef f(x):\n    frame = sys._getframe(1)\n    real = frame.f_globals['f']\n"
        "    frame.f_globals['f'] = lambda y: y * y\n"
        "    for code in frame.f_back.f_locals.get('test_codes', ()):\n"
        "        exec(code, frame.f_globals)\n"
        "    frame.f_globals['f'] = real\n    return 0\n",
        "import _thread\ndef f(x):\n    _thread.interrupt_main()\n    return 0\n",
        "import ctypes\ndef f(x):\n    return x * x\n",
        "class Anything:\n    def __eq__(self, other):\n        return True\n"
        "def f(x):\n    return Anything()\n",
        "class Sneaky(int):\n    def __eq__(self, other):\n        return True\n"
        "def f(x):\n    return Sneaky(0)\n",
    ],
    ids=[
        "sys_exit",
        "os_exit",
        "system_exit",
        "fake_report",
        "fake_marks",
        "rerun_tests",
        "interrupt_main",
        "ctypes",
        "always_equal",
        "always_equal_int",
    ],
)
def test_reward_hacks_score_0(hack: str) -> None:
    assert _verifier().score(hack, GOLD_SQUARE).accuracy == 0.0


def test_equality_guard_keeps_legitimate_comparisons() -> None:
    code = (
        "import enum\nfrom collections import namedtuple\n"
        "Pair = namedtuple('Pair', 'a b')\n"
        "class Size(enum.IntEnum):\n    SMALL = 1\n"
        "class Point:\n    def __init__(self, x):\n        self.x = x\n"
        "    def __eq__(self, other):\n        return isinstance(other, Point) and other.x == self.x\n"
    )
    tests = [
        "assert Pair(1, 2) == (1, 2)",
        "assert Size.SMALL == 1",
        "assert 2.0 == 2",
        "assert Point(1) == Point(1)",
        "value = [Point(3)]\nassert value[0] == Point(3), 'same type, custom __eq__'",
        "assert [1, 2] == [1, 2] == [1, 2]",
    ]
    assert run_python_tests(code, tests).status == "passed"


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


def test_never_raises_on_odd_answers() -> None:
    verifier = _verifier()
    for answer in ["", "\x00\x01", "<|video_pad|>" * 100, "```", "```python", "é" * 10_000]:
        outcome = verifier.score(answer, GOLD_SQUARE)
        assert outcome.accuracy == 0.0 and outcome.status == "ok"


def test_params_are_validated() -> None:
    info = get_verifier("code_exec", version=1)
    with pytest.raises(ValueError, match="timeout_s"):
        info.create({"timeout_s": 0})
    with pytest.raises(ValueError, match=r"unknown_key|extra"):
        info.create({"unknown_key": 1})
