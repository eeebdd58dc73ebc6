"""The code sandbox attacked by an outside tester, as an RL policy hunting for reward would.

Each test keeps one probe. Those named after a hole failed on the sandbox as first merged (the
hole is described in its docstring, with what it did); the others are probes that turned out
safe and stay as guards. Everything is checked from outside the sandbox where it can be (the
host's own device nodes, its kernel pools, wall-clock time spent by the scorer), never by
trusting the sandbox's report alone.
"""

from __future__ import annotations

import ast
import errno
import json
import math
import os
import shutil
import stat
import struct
import time

import pytest

from tests.rewards.test_sandbox import (  # noqa: F401 - the fixture guards every test here too
    GOLD_SQUARE,
    _call,
    _returned,
    _verifier,
    no_sandbox_outlives_its_test,
    pytestmark,
)
from videorl_kit.rewards import sandbox_command
from videorl_kit.rewards.code_tests import plan_tests
from videorl_kit.rewards.plain_eval import MAX_EQUAL_HASHES, EvalLimit, Evaluator
from videorl_kit.rewards.sandbox import MAX_PENDING_SIGNALS
from videorl_kit.rewards.sandbox_child import WireError, encode_value
from videorl_kit.rewards.sandbox_wire import decode_value

GOLD_ONE_CALL = json.dumps({"entry_point": "f", "tests": ["assert f(2) == 4"]})
#: Distinct integers with one hash: CPython hashes an int modulo this prime.
HASH_MODULUS = 2**61 - 1


def _colliding(count: int) -> list[int]:
    return [HASH_MODULUS * k for k in range(1, count + 1)]


def _forged_report(result_line: str) -> str:
    """Code that writes its own report, one ``result`` line (a Python expression computed in the
    child), on every descriptor, and exits.

    The report channel carries whatever the code writes there; the host must still bound the
    work that reading it causes.
    """
    return (
        "import os\ndef f(x):\n"
        f"    report = ('status ran\\n' + {result_line} + '\\nend\\n').encode()\n"
        "    for fd in range(3, 64):\n        try:\n"
        "            os.write(fd, report)\n"
        "        except OSError:\n            pass\n"
        "    os._exit(0)\n"
    )


# ------------------------------------------------------------------------------ host inodes


def test_the_hosts_device_nodes_cannot_be_changed() -> None:
    """Hole: the four devices are bind mounts of the host's own nodes, and a sandbox started by
    root runs as kernel uid 0, their owner: ``os.chmod('/dev/null', 0)`` inside it changed the
    host's /dev/null for every user (non-root programs could no longer open it). The probe
    asks for the mode the nodes already have, so the host is unchanged whatever happens."""
    devices = ["/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"]
    before = {path: os.stat(path).st_mode for path in devices}
    code = (
        "import os\ndef f(modes):\n    outcome = {}\n"
        "    for path, mode in modes.items():\n        try:\n"
        "            os.chmod(path, mode)\n            outcome[path] = 'changed'\n"
        "        except OSError as exc:\n            outcome[path] = exc.errno\n"
        "    fd = os.open('/dev/null', os.O_WRONLY)\n"
        "    try:\n        os.fchmod(fd, modes['/dev/null'])\n        outcome['fchmod'] = 'changed'\n"
        "    except OSError as exc:\n        outcome['fchmod'] = exc.errno\n"
        "    outcome['still usable'] = os.write(fd, b'x')\n"
        "    return outcome\n"
    )
    outcome = _returned(code, {path: stat.S_IMODE(mode) for path, mode in before.items()})
    assert {path: os.stat(path).st_mode for path in devices} == before
    assert outcome.pop("still usable") == 1
    assert set(outcome.values()) == {1}, outcome  # EPERM, every one


def test_the_hosts_device_nodes_cannot_be_changed_through_an_acl() -> None:
    """Hole: a POSIX ACL is the mode by another name: ``setxattr('/dev/null',
    'system.posix_acl_access', ...)`` by its owner (root, for a sandbox started by root) turned
    a copy of the host's /dev/null from 0666 to 0600. The probe's ACL says rw for all, the mode
    the host's node has, so the host is unchanged whatever happens."""
    before = os.stat("/dev/null").st_mode
    assert stat.S_IMODE(before) == 0o666
    entries = [(0x01, 6), (0x04, 6), (0x20, 6)]  # owner, group, other: rw-
    acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, 2**32 - 1) for t, p in entries)
    code = (
        "import os\ndef f(acl):\n    errors = []\n"
        "    for name in ('system.posix_acl_access', 'user.x', 'security.x', 'trusted.x'):\n"
        "        try:\n            os.setxattr('/dev/null', name, acl)\n"
        "            errors.append(name)\n"
        "        except OSError as exc:\n            errors.append(exc.errno)\n"
        "    try:\n        os.removexattr('/dev/null', 'system.posix_acl_access')\n"
        "        errors.append('removed')\n"
        "    except OSError as exc:\n        errors.append(exc.errno)\n"
        "    return errors\n"
    )
    assert _returned(code, acl) == [1] * 5  # EPERM
    assert os.stat("/dev/null").st_mode == before


def test_ownership_of_the_devices_stays_the_hosts() -> None:
    """Safe: chown of the host's nodes fails (a uid outside the namespace's one-uid map, or no
    capability); the only ids the sandbox can name are the owner's own."""
    code = (
        "import os\ndef f():\n    found = []\n    for uid in (0, 1000, 65533):\n        try:\n"
        "            os.chown('/dev/null', uid, uid)\n            found.append('changed')\n"
        "        except OSError as exc:\n            found.append(exc.errno)\n    return found\n"
    )
    before = os.stat("/dev/null")
    assert set(_returned(code)) <= {errno.EPERM, errno.EINVAL}
    after = os.stat("/dev/null")
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)


# ------------------------------------------------------------------------------ host pools


def test_threads_are_refused_so_a_thread_bomb_cannot_take_the_hosts_pids() -> None:
    """Hole: RLIMIT_NPROC does not bind kernel uid 0, and threads with 16 KB stacks fit by the
    ten thousand in 512 MB: a sandbox started by root created 25,172 threads, until the host
    (``kernel.pid_max`` 32768) had no PID left for any process. The probe stops at 200."""
    code = (
        "import _thread, ctypes\ndef f(cap):\n"
        "    _thread.stack_size(32768)\n    lock = _thread.allocate_lock()\n    lock.acquire()\n"
        "    started = 0\n    try:\n        for _ in range(cap):\n"
        "            _thread.start_new_thread(lock.acquire, ())\n            started += 1\n"
        "    except RuntimeError:\n        pass\n"
        "    libc = ctypes.CDLL(None, use_errno=True)\n"
        "    attr, tid = ctypes.create_string_buffer(128), ctypes.c_ulong()\n"
        "    libc.pthread_attr_init(attr)\n    libc.pthread_attr_setstacksize(attr, 16384)\n"
        "    pause = ctypes.cast(libc.pause, ctypes.c_void_p)\n"
        "    native = libc.pthread_create(ctypes.byref(tid), attr, pause, None)\n"
        "    return started, native\n"
    )
    started, native_error = _returned(code, 200)
    assert started == 0
    assert native_error != 0  # pthread_create's own error number: no thread either


@pytest.mark.parametrize(
    ("syscall", "args"),
    [(206, "4096, ctypes.byref(ctypes.c_ulong(0))"), (253, ""), (294, "0"), (319, "b'm', 0")],
    ids=["io_setup", "inotify_init", "inotify_init1", "memfd_create"],
)
def test_host_wide_kernel_pools_cannot_be_drained(syscall: int, args: str) -> None:
    """Hole: kernel AIO contexts come from one host-wide pool (``fs.aio-max-nr``, 65536): 16
    ``io_setup(4096)`` calls took all of it, and every other program's ``io_setup`` failed
    with EAGAIN until the run ended. inotify instances count against the kernel user, root for
    a sandbox started by root: 60 of them left the host's root 68 of its 128. ``memfd_create``
    files are memory outside RLIMIT_AS: 60 of 4 MB added 240 MB to a 512 MB child."""
    code = (
        "import ctypes\ndef f():\n    libc = ctypes.CDLL(None, use_errno=True)\n"
        f"    return libc.syscall({syscall}{', ' if args else ''}{args}), ctypes.get_errno()\n"
    )
    assert _returned(code) == (-1, 1)  # EPERM


def test_queued_signals_real_time_priority_and_nice_are_bounded() -> None:
    """Hole: queued signals count per kernel user (root's, host-wide, for a sandbox started by
    root) up to RLIMIT_SIGPENDING, which was the scorer's (96549 here): the child queued them
    without bound. Real-time priority and negative nice values are refused whatever limits the
    scorer was started with."""
    code = (
        "import ctypes, os, resource, signal\ndef f(count):\n"
        "    limits = [resource.getrlimit(getattr(resource, name)) for name in"
        " ('RLIMIT_SIGPENDING', 'RLIMIT_RTPRIO', 'RLIMIT_NICE', 'RLIMIT_NPROC')]\n"
        "    libc = ctypes.CDLL(None, use_errno=True)\n"
        "    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGRTMIN})\n"
        "    queued = 0\n    while queued < count and libc.sigqueue(os.getpid(), signal.SIGRTMIN,"
        " ctypes.c_void_p(0)) == 0:\n        queued += 1\n"
        "    try:\n        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))\n"
        "        fifo = 'allowed'\n    except OSError as exc:\n        fifo = exc.errno\n"
        "    return limits, queued, fifo\n"
    )
    limits, queued, fifo = _returned(code, 1000)
    assert limits == [(MAX_PENDING_SIGNALS,) * 2, (0, 0), (0, 0), (1, 1)]
    assert queued <= MAX_PENDING_SIGNALS and fifo == 1


def test_system_calls_newer_than_the_filter_and_foreign_tables_are_refused() -> None:
    """Guard: the filter is a list of refusals, so a call a newer kernel adds would be open by
    default; numbers past the last one it knows (and x32's) report ENOSYS instead."""
    code = (
        "import ctypes\ndef f():\n    libc = ctypes.CDLL(None, use_errno=True)\n    found = []\n"
        "    for number in (470, 500, 0x40000000 + 39):\n"
        "        found.append((libc.syscall(number, 0, 0, 0, 0, 0), ctypes.get_errno()))\n"
        "    return found\n"
    )
    assert _returned(code) == [(-1, errno.ENOSYS)] * 3


def test_the_remaining_kernel_interfaces_an_attacker_would_try_next_are_closed() -> None:
    """Guard: raw ``clone`` of a thread, ``vfork``, ``perf_event_open``, ``bpf``, ``setns``,
    ``kcmp``, ``pidfd_getfd`` and ``personality`` are refused by the filter; raising a hard
    limit, ``PR_SET_MM`` and ``TIOCSTI`` on the inherited stdin fail in the kernel."""
    code = (
        "import ctypes, fcntl, resource, termios\ndef f():\n"
        "    libc = ctypes.CDLL(None, use_errno=True)\n    found = {}\n"
        "    calls = {'clone': (56, 0x10F00, 0), 'vfork': (58,), 'perf_event_open': (298, 0, 0,"
        " -1, -1, 0), 'bpf': (321, 0, 0, 0), 'setns': (308, 0, 0), 'kcmp': (312, 1, 1, 0, 0, 0),"
        " 'pidfd_getfd': (438, 0, 0, 0), 'personality': (135, 0x0008)}\n"
        "    for name, args in calls.items():\n"
        "        found[name] = (libc.syscall(*args), ctypes.get_errno())\n"
        "    found['PR_SET_MM'] = (libc.prctl(35, 1, 0, 0, 0), ctypes.get_errno())\n"
        "    try:\n        resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))\n"
        "        found['raise limit'] = 'raised'\n"
        "    except ValueError:\n        found['raise limit'] = 'refused'\n"
        "    try:\n        fcntl.ioctl(0, termios.TIOCSTI, b'x')\n        found['TIOCSTI'] = 'typed'\n"
        "    except OSError as exc:\n        found['TIOCSTI'] = exc.errno\n"
        "    return found\n"
    )
    found = _returned(code)
    assert found.pop("raise limit") == "refused"
    assert found.pop("TIOCSTI") == errno.ENOTTY
    assert found.pop("PR_SET_MM")[0] == -1
    assert found == dict.fromkeys(found, (-1, errno.EPERM)), found


# ------------------------------------------------------------------------------ host time


def test_a_returned_set_of_colliding_hashes_costs_the_host_no_time() -> None:
    """Hole: the code can write its own report, and a set of 20,000 distinct integers with one
    hash took the host 11 s to decode (each insertion compares with every earlier one), all of
    it after the child had died, holding the scorer's GIL; 40,000 fit in the 1 MB report."""
    keys = f"[str({HASH_MODULUS} * k) for k in range(1, 30_001)]"
    for value in (
        f"'result ok {{\"set\": [' + ', '.join({keys}) + ']}}'",
        f"'result ok {{\"dict\": [[' + ', 1], ['.join({keys}) + ', 1]]}}'",
    ):
        started = time.monotonic()
        outcome = _verifier().score(_forged_report(value), GOLD_ONE_CALL)
        assert outcome.accuracy == 0.0
        assert outcome.details["sandbox"]["status"] == "invalid_report"
        assert "share a hash" in outcome.details["sandbox"]["message"]
        assert time.monotonic() - started < 3.0


def test_the_wire_decoder_refuses_sets_and_dicts_of_colliding_hashes() -> None:
    few = _colliding(MAX_EQUAL_HASHES)
    assert decode_value(encode_value(set(few), max_bytes=10_000)) == set(few)
    assert decode_value(encode_value({1, -1, -2}, max_bytes=100)) == {1, -1, -2}
    many = _colliding(MAX_EQUAL_HASHES + 1)
    for value in (set(many), frozenset(many), dict.fromkeys(many, 0)):
        with pytest.raises(WireError, match="share a hash"):
            decode_value(encode_value(value, max_bytes=10_000))


@pytest.mark.parametrize(
    "test",
    [
        "assert len(set(r)) == 3",
        "assert len(frozenset(r)) == 3",
        "assert dict(zip(r, r)) == {}",
        "assert {1}.union(r) == {1}",
        "assert {1}.issubset(r)",
        "assert set(x for x in r) == set()",
    ],
)
def test_sets_a_test_builds_from_colliding_values_are_refused(test: str) -> None:
    """Hole: a test that builds a set from a returned list (``len(set(f(x)))``) ran the same
    quadratic insertion in one C call, past every deadline of the evaluator."""
    with pytest.raises(EvalLimit, match="share a hash"):
        Evaluator().run(ast.parse(test).body, {"r": _colliding(2000)})


def test_sets_of_plain_values_and_duplicates_are_still_built() -> None:
    env = {"r": [3, 1, 3, 2] * 1000, "nan": [math.nan] * 50}
    tests = ["set(r) == {1, 2, 3}", "len(dict(zip(r, r))) == 3", "len(set(nan)) == 1"]
    Evaluator().run(ast.parse("\n".join("assert " + test for test in tests)).body, env)


@pytest.mark.parametrize(
    "test",
    ["a * b == 0", "a // b == 0", "a % b == 0", "divmod(a, b) == 0", "math.gcd(a, b) == 0"],
)
def test_arithmetic_on_two_huge_returned_integers_is_refused(test: str) -> None:
    """Hole: two returned integers of 4 million bits (the 1 MB report holds them) took 4 s to
    multiply, 28 s to divide and minutes for ``math.gcd``: one C call, no deadline."""
    env = {"a": (1 << 300_000) + 1, "b": (1 << 300_000) + 3}
    started = time.monotonic()
    with pytest.raises(EvalLimit, match="too costly"):
        Evaluator().run(ast.parse("assert " + test).body, env)
    assert time.monotonic() - started < 1.0
    Evaluator().run(ast.parse(f"assert not ({test})").body, {"a": 1 << 300_000, "b": 7})


def test_a_forged_report_cannot_flood_the_results_details() -> None:
    """Hole: messages in the report (what a call raised, why the code failed) were taken whole,
    so a forged report put 900 KB into the details of one reward result (into every trainer log
    line and ``reward score --json`` row); they are cut as the child cuts its own."""
    outcome = _verifier().score(
        _forged_report("'result raised \"' + 'x' * 900_000 + '\"'"), GOLD_ONE_CALL
    )
    assert outcome.accuracy == 0.0
    assert len(json.dumps(outcome.details)) < 2_000


# ------------------------------------------------------------------------------ verdicts


@pytest.mark.parametrize(
    ("returned", "test"),
    [
        ("10 ** 5000", "assert f(2) == 4"),
        ("[1, 10 ** 5000]", "assert f(2) == [1, 4]"),
        ("10 ** 5000", "d = {1: 2}\nassert d[f(2)] == 2"),
    ],
    ids=["int", "nested", "key_error"],
)
def test_an_integer_too_long_to_print_fails_the_test_without_raising(
    returned: str, test: str
) -> None:
    """Hole: explaining a failed test printed what the call returned, and ``repr`` of an
    integer of more than 4300 digits raises ValueError: the verifier raised instead of scoring
    (the router turned it into an 'error' 0, losing the explanation)."""
    gold = json.dumps({"entry_point": "f", "tests": [test]})
    outcome = _verifier().score(f"def f(x):\n    return {returned}\n", gold)
    assert outcome.status == "ok" and outcome.accuracy == 0.0
    assert (
        "too large to show" in outcome.details["sandbox"]["message"]
        or "KeyError" in (outcome.details["sandbox"]["message"])
    )


def test_f_strings_convert_values_only_as_asked() -> None:
    """Hole: an f-string field computed str(), repr() and ascii() of its value whatever the
    conversion, so ``f"{f(x):x}"`` of a correct, huge integer failed (str() refuses it) where
    Python passes; and it did the work three times."""
    test = f"assert f'{{f(1):x}}' == {format(10**5000, 'x')!r}"
    gold = json.dumps({"entry_point": "f", "tests": [test]})
    assert _verifier().score("def f(x):\n    return 10 ** 5000\n", gold).accuracy == 1.0


def test_plain_values_cross_exactly() -> None:
    """Safe: -0.0, NaN, infinities, integers past 2**63 and past 4300 digits, booleans (not
    ints), lone surrogates and bytes reach the host as they were."""
    code = (
        "def f():\n    return [-0.0, float('nan'), float('-inf'), 2 ** 64, 10 ** 5000 + 1,"
        " True, '\\ud800x', b'\\x00\\xff', bytearray(b'a'), 1 + 2j, frozenset({()})]\n"
    )
    value = _returned(code)
    assert math.copysign(1.0, value[0]) == -1.0 and math.isnan(value[1])
    assert value[2:4] == [-math.inf, 2**64] and value[4] == 10**5000 + 1
    assert value[5] is True and value[6] == "\ud800x"
    assert value[7:] == [b"\x00\xff", bytearray(b"a"), 1 + 2j, frozenset({()})]
    assert type(value[8]) is bytearray


def test_an_answer_that_rewrites_its_pending_calls_gains_nothing() -> None:
    """Safe: every call's arguments are in the child's request, which the code can reach
    through frames and rewrite before the calls are made; the expected values are not there,
    so an answer that makes every call trivial still has to return the right values."""
    gold = json.dumps({"entry_point": "f", "tests": ["assert f(5) == 25", "assert f(7) == 49"]})
    rewriter = (
        "import sys\nframe = sys._getframe()\n"
        "while frame is not None and 'request' not in frame.f_locals:\n"
        "    frame = frame.f_back\n"
        "request = frame.f_locals['request']\n"
        "request['calls'][:] = [((0,), {}) for _ in request['calls']]\n"
        "def f(x):\n    return x * x\n"
    )
    assert _verifier().score(rewriter, gold).accuracy == 0.0
    assert _verifier().score("def f(x):\n    return x * x\n", gold).accuracy == 1.0


def test_a_single_writer_flooding_stdout_cannot_hold_the_scorer_past_its_deadline() -> None:
    """Safe: vmsplice gifts one page 16 times per call, so the child writes far faster than it
    copies; the host reads every pipe without blocking and still stops at its deadline."""
    flood = (
        "import ctypes, fcntl\n"
        "class iovec(ctypes.Structure):\n"
        "    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]\n"
        "def f(x):\n    libc = ctypes.CDLL(None, use_errno=True)\n"
        "    buf = ctypes.create_string_buffer(65536)\n"
        "    iov = (iovec * 16)(*[iovec(ctypes.addressof(buf), 65536) for _ in range(16)])\n"
        "    fcntl.fcntl(1, 1031, 1 << 20)\n"
        "    while True:\n        libc.syscall(278, 1, iov, 16, 0)\n"
    )
    started = time.monotonic()
    report = _call(flood, 1, timeout_s=1.0)
    assert report.status == "timeout"
    assert time.monotonic() - started < 1.0 + 3.0


def test_the_shipped_code_tasks_plan_to_calls_only() -> None:
    """Safe: every test of the shipped synth-code task is judged on returned values, where no
    answer can forge a verdict (the weaker script mode never runs for it)."""
    import random

    from videorl_kit.synth.layout import Canvas
    from videorl_kit.synth.tasks_code import build_code

    for index in range(25):
        gold = json.loads(build_code(random.Random(index), Canvas(), index).answer)
        plan = plan_tests(gold["entry_point"], gold["tests"])
        assert plan.script_tests == () and len(plan.call_tests) == len(gold["tests"])


@pytest.mark.parametrize(
    ("test", "returned"),
    [
        ('d = {}\nd["a"] = f(1)\nassert d["a"] == 1', "x"),
        ("r = [0, 0]\nr[0] = f(1)\nassert r == [1, 0]", "x"),
        ('d = {"a": 1}\nassert f(1) == {**d}', "{'a': x}"),
        ('d = {"a": 1}\nassert f(1) == dict(**d)', "{'a': x}"),
    ],
    ids=["dict_item", "list_item", "dict_display", "call_kwargs"],
)
def test_tests_the_evaluator_cannot_run_become_script_tests(test: str, returned: str) -> None:
    """Hole (a wrong verdict for honest answers): assignments to an item and ``**`` unpacking
    passed the planner, then the evaluator refused them while judging, so the test failed for
    every answer, the correct one included. They are script tests now."""
    gold = json.dumps({"entry_point": "f", "tests": [test]})
    outcome = _verifier().score(f"def f(x):\n    return {returned}\n", gold)
    assert outcome.accuracy == 1.0, outcome.details
    assert outcome.details["sandbox"]["judged_by"] == {
        "returned_values": 0,
        "test_process": 1,
        "shared_interpreter": 0,
    }


def test_a_sandbox_that_fails_mid_run_is_unverifiable_never_weaker(monkeypatch) -> None:
    """Guard: once the verifier exists, a bubblewrap that stops working (here: replaced by a
    program that exits at once) makes each result unverifiable (masked by trainers) with the
    reason; nothing falls back to the weaker subprocess mode."""
    verifier = _verifier()
    monkeypatch.setattr(sandbox_command, "bwrap_path", lambda: shutil.which("false"))
    outcome = verifier.score("def f(x):\n    return x * x\n", GOLD_SQUARE)
    assert outcome.status == "unverifiable" and outcome.accuracy == 0.0
    assert outcome.details["sandbox"]["isolation"] == "bubblewrap"
    assert outcome.details["sandbox"]["status"] == "sandbox_error"
