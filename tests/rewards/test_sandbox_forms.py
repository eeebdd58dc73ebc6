"""Code rewards in every test form, attacked as an RL policy would (issue 19 §1).

Each attack is a *wrong* answer to "square a number" that tries to score 1 without computing
squares. On the kit before issue 19, every form but plain calls ran the tests in the answer's
own interpreter, and all six attacks of the outside red team (and the siblings below) scored
1.0 there; each is kept here in every form the kit accepts: plain asserts (decided on the host),
a loop over cases, HumanEval's ``def check(candidate)`` (with and without the harness's
``check(f)`` line), unittest classes (run by ``unittest.main()`` or by a runner the test
writes) and pytest style functions. The correct answer scores 1 in each form.
"""

from __future__ import annotations

import json
import time

import pytest

from tests.rewards.test_sandbox import (  # noqa: F401 - the fixture guards every test here too
    _verifier,
    no_sandbox_outlives_its_test,
    pytestmark,
)

CASES = [(2, 4), (3, 9), (-4, 16)]
SQUARE = "def f(x):\n    return x * x\n"


def _expr(call: str, expected: str, check: str) -> str:
    if check == "eq":
        return f"{call} == {expected}"
    if check == "abs":
        return f"abs({call} - {expected}) < 1e-9"
    raise ValueError(check)


def _unittest(body: list[str], runner: str) -> list[str]:
    case = "import unittest\nclass TestF(unittest.TestCase):\n    def test_cases(self):\n"
    case += "".join(f"        {line}\n" for line in body)
    if runner == "main":
        return [case, "if __name__ == '__main__':\n    unittest.main()"]
    return [
        case,
        "import io\nsuite = unittest.defaultTestLoader.loadTestsFromTestCase(TestF)\n"
        "result = unittest.TextTestRunner(stream=io.StringIO()).run(suite)\n"
        "assert result.wasSuccessful()",
    ]


def gold(form: str, check: str = "eq") -> str:
    """The ground truth of ``f(x) == x * x`` in one test form, comparing with ``check``."""
    if check == "map":  # the cases through map(): a form a raised StopIteration used to end
        pairs = repr(CASES)
        tests = {
            "loop": [f"cases = {pairs}\nassert all(map(lambda c: f(c[0]) == c[1], cases))"],
            "humaneval": [
                f"def check(candidate):\n    assert all(map(lambda c: candidate(c[0]) == c[1], "
                f"{pairs}))\n",
                "check(f)",
            ],
            "unittest": _unittest(
                [f"self.assertTrue(all(map(lambda c: f(c[0]) == c[1], {pairs})))"], "runner"
            ),
        }[form]
        return json.dumps({"entry_point": "f", "tests": tests})
    asserts = [_expr(f"{{name}}({x})", str(y), check) for x, y in CASES]
    if form == "plain":
        tests = ["assert " + a.format(name="f") for a in asserts]
    elif form == "loop":
        tests = [f"cases = {CASES!r}\nfor x, y in cases:\n    assert {_expr('f(x)', 'y', check)}"]
    elif form in ("humaneval", "humaneval_uncalled"):
        body = "".join(f"    assert {a.format(name='candidate')}\n" for a in asserts)
        tests = ["METADATA = {'author': 'x'}\n\ndef check(candidate):\n" + body]
        tests += ["check(f)"] if form == "humaneval" else []
    elif form in ("unittest", "unittest_runner"):
        if check == "eq":
            body = [f"self.assertEqual(f({x}), {y})" for x, y in CASES]
        else:
            body = [f"self.assertTrue({a.format(name='f')})" for a in asserts]
        tests = _unittest(body, "main" if form == "unittest" else "runner")
    elif form == "pytest":
        tests = [
            "def test_cases():\n" + "".join(f"    assert {a.format(name='f')}\n" for a in asserts)
        ]
    else:
        raise ValueError(form)
    return json.dumps({"entry_point": "f", "tests": tests})


FORMS = [
    "plain",
    "loop",
    "humaneval",
    "humaneval_uncalled",
    "unittest",
    "unittest_runner",
    "pytest",
]


def _score(answer: str, gold_text: str, **params) -> float:
    return (
        _verifier(timeout_s=params.pop("timeout_s", 3.0), **params)
        .score(answer, gold_text)
        .accuracy
    )


@pytest.mark.parametrize("check", ["eq", "abs"])
@pytest.mark.parametrize("form", FORMS)
def test_the_correct_answer_scores_1_in_every_form(form: str, check: str) -> None:
    outcome = _verifier(timeout_s=3.0).score(SQUARE, gold(form, check))
    assert outcome.accuracy == 1.0, outcome.details
    judged_by = outcome.details["sandbox"]["judged_by"]
    assert judged_by["shared_interpreter"] == 0  # never the weaker mode by default


@pytest.mark.parametrize("form", FORMS)
def test_a_wrong_answer_scores_0_in_every_form(form: str) -> None:
    """Hole: an unittest class behind ``if __name__ == '__main__'``, or a HumanEval ``check``
    or pytest function that nothing called, never ran, so every answer passed."""
    assert _score("def f(x):\n    return x + x\n", gold(form)) == 0.0


# ------------------------------------------------------------------------------ the six attacks

FRAME_WALK_EMPTIES_THE_TESTS = """
import sys
frame = sys._getframe()
while frame is not None:
    for value in list(frame.f_locals.values()):
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, list) and key in ('script', 'tests', 'calls'):
                    item.clear()
    frame = frame.f_back
def f(x):
    return 0
"""

NONCE_FROM_A_FRAME_THEN_EXIT = """
import os, sys
frame = sys._getframe()
while frame is not None:
    request = frame.f_locals.get('request')
    if isinstance(request, dict):
        nonce = request.get('nonce') or '0' * 32
        report = 'status ran\\npass ' + nonce + '\\nend\\n'
        for fd in (request.get('result_fd'), 3, 4, 5, 6):
            try:
                os.write(fd, report.encode())
            except (OSError, TypeError):
                pass
        os._exit(0)
    frame = frame.f_back
def f(x):
    return 0
"""

ALWAYS_EQUAL = """
class Anything:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __hash__ = object.__hash__
    def __sub__(self, other): return 0.0
    def __rsub__(self, other): return 0.0
    def __abs__(self): return 0.0
    def __lt__(self, other): return True
def f(x):
    return Anything()
"""

GC_FINDS_THE_REQUEST = """
import gc
for obj in gc.get_objects():
    if isinstance(obj, dict) and 'nonce' in obj:
        for key in ('script', 'tests', 'calls'):
            if isinstance(obj.get(key), list):
                obj[key].clear()
def f(x):
    return 0
"""

REPLACED_BUILTINS = """
import builtins
builtins.abs = lambda value: 0
builtins.all = lambda iterable: True
def f(x):
    return 0
"""

EXPECTED_VALUES_PARSED_FROM_THE_TESTS = r"""
import gc, re
EXPECTED = {}
PATTERNS = [r'\((-?\d+)\)\s*(?:==|,|-)\s*(-?\d+)', r'\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)']
for obj in gc.get_objects():
    texts = []
    if isinstance(obj, dict):
        texts = [v for v in obj.values() if isinstance(v, str)]
        texts += [t for v in obj.values() if isinstance(v, list) for t in v if isinstance(t, str)]
    for text in texts:
        for pattern in PATTERNS:
            for x, y in re.findall(pattern, text):
                EXPECTED.setdefault(int(x), int(y))
def f(x):
    return EXPECTED.get(x, 0)
"""

ATTACKS = {
    "frame_walk_empties_the_tests": (FRAME_WALK_EMPTIES_THE_TESTS, "eq"),
    "nonce_from_a_frame_then_exit": (NONCE_FROM_A_FRAME_THEN_EXIT, "eq"),
    "always_equal_object": (ALWAYS_EQUAL, "eq"),
    "always_equal_object_abs": (ALWAYS_EQUAL, "abs"),
    "gc_finds_the_request": (GC_FINDS_THE_REQUEST, "eq"),
    "replaced_builtin_abs": (REPLACED_BUILTINS, "abs"),
    "expected_values_parsed_from_the_tests": (EXPECTED_VALUES_PARSED_FROM_THE_TESTS, "eq"),
}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_the_red_teams_six_attacks_score_0_in_every_form(attack: str, form: str) -> None:
    """Holes (all forms but plain calls, before issue 19): the tests ran after the answer in
    its interpreter, so the answer could empty the test list through the call frames or
    ``gc``, write the pass report with the nonce it read from a frame, return an object equal
    to everything, replace ``abs``, or read the expected values from the tests it was sent.
    The tests now run in another process: the answer holds no test, no nonce, no channel."""
    code, check = ATTACKS[attack]
    assert _score(code, gold(form, check)) == 0.0


# ------------------------------------------------------------------------------ siblings


@pytest.mark.parametrize("form", ["loop", "humaneval", "unittest"])
def test_a_raised_stop_iteration_cannot_end_the_tests_loop(form: str) -> None:
    """Hole: ``StopIteration`` raised by the answer ended ``map()`` early, so ``all()`` saw no
    case at all. A call's exception arrives as a fresh built-in one, and ``StopIteration`` as
    ``RuntimeError`` (as inside a generator)."""
    assert _score("def f(x):\n    raise StopIteration\n", gold(form, "map")) == 0.0
    assert _score(SQUARE, gold(form, "map")) == 1.0


def test_an_exception_the_test_framework_catches_cannot_skip_the_tests() -> None:
    """Hole: ``unittest.SkipTest`` raised by the answer skipped every test, and a run of
    skipped tests is successful. Only built-in exception classes cross (SkipTest arrives as
    ``Exception``: an error); the exception's own class and code never reach the tests."""
    code = "import unittest\ndef f(x):\n    raise unittest.SkipTest('not today')\n"
    assert _score(code, gold("unittest_runner")) == 0.0
    subclass = (
        "class Sneaky(AssertionError):\n    def __eq__(self, other):\n        return True\n"
        "def f(x):\n    raise Sneaky()\n"
    )
    tests = [
        "for x, y in [(2, 4), (3, 9)]:\n    try:\n        r = f(x)\n"
        "    except ValueError as exc:\n        r = exc\n    assert r == y"
    ]
    assert _score(subclass, json.dumps({"entry_point": "f", "tests": tests})) == 0.0


def test_a_str_or_int_subclass_crosses_as_its_plain_value() -> None:
    """Hole: a ``str`` (or ``int``) subclass whose ``__eq__`` is always true passed a loop of
    string comparisons. Only its value crosses."""
    gold_text = json.dumps(
        {
            "entry_point": "f",
            "tests": [
                "for x, y in [('a', 'A'), ('b', 'B')]:\n    assert f(x) == y and f(x) != 'z'"
            ],
        }
    )
    code = (
        "class S(str):\n    def __eq__(self, other):\n        return True\n"
        "    def __ne__(self, other):\n        return False\n    __hash__ = str.__hash__\n"
        "def f(x):\n    return S('?')\n"
    )
    assert _score(code, gold_text) == 0.0
    assert _score("def f(x):\n    return x.upper()\n", gold_text) == 1.0
    number = "class I(int):\n    def __eq__(self, other):\n        return True\n"
    number += "    __hash__ = int.__hash__\ndef f(x):\n    return I(0)\n"
    assert _score(number, gold("loop")) == 0.0


@pytest.mark.parametrize(
    "body",
    [
        "    v = []\n    for _ in range(100000):\n        v = [v]\n    return v\n",
        "    return 'x' * (64 * 1024 * 1024)\n",
        "    return [list(range(1000)) for _ in range(10000)]\n",
        "    import itertools\n    return itertools.count()\n",
    ],
    ids=["deep", "huge_string", "huge_list", "endless_iterator"],
)
def test_huge_or_deep_returns_fail_without_harming_the_tests(body: str) -> None:
    outcome = _verifier(timeout_s=5.0).score(f"def f(x):\n{body}", gold("humaneval"))
    assert outcome.accuracy == 0.0 and outcome.status == "ok"
    assert "not plain data" in outcome.details["sandbox"]["message"]


FORGED_OUTPUT = """
import os
LINES = [b'started\\n', b'status ran\\n', b'done ["pass", 3]\\nend\\n',
         b'reply ["ok", 4, null, ""]\\n', b'pass ' + b'0' * 32 + b'\\nend\\n']
def f(x):
    for fd in range(0, 64):
        for line in LINES:
            try:
                os.write(fd, line)
            except OSError:
                pass
    print('done ["pass", 3]')
    return 0
"""


@pytest.mark.parametrize("form", ["loop", "humaneval", "unittest_runner"])
def test_output_forged_on_every_descriptor_gives_no_pass(form: str) -> None:
    """Guard: the tests' verdict travels on a pipe the answer's process does not hold; what it
    writes on fd 1, 2 or its own report pipe is output, or breaks its own replies."""
    assert _score(FORGED_OUTPUT, gold(form)) == 0.0


def test_sleeping_past_the_time_limit_scores_0_within_the_limit() -> None:
    sleeper = "import time\ndef f(x):\n    time.sleep(60)\n    return x * x\n"
    started = time.monotonic()
    outcome = _verifier(timeout_s=5.0, call_timeout_s=0.5).score(sleeper, gold("humaneval"))
    assert outcome.accuracy == 0.0 and outcome.details["sandbox"]["status"] == "timeout"
    assert time.monotonic() - started < 0.5 + 3.0
    started = time.monotonic()
    outcome = _verifier(timeout_s=1.0).score(sleeper, gold("loop"))
    assert outcome.details["sandbox"]["status"] == "timeout"
    assert time.monotonic() - started < 1.0 + 3.0


@pytest.mark.parametrize(
    "trick",
    [
        "import os\n    while True:\n        os.fork()",
        "import os, signal\n    os.kill(os.getpid(), signal.SIGSTOP)",
        "import os, signal\n    os.kill(-1, signal.SIGKILL)",
        "import os, signal\n    os.kill(0, signal.SIGTERM)",
        "import signal\n    signal.signal(signal.SIGALRM, lambda *a: None)\n"
        "    signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)",
        "import _thread\n    _thread.interrupt_main()",
    ],
    ids=["fork_bomb", "sigstop_self", "kill_all", "kill_group", "alarm_storm", "interrupt"],
)
def test_process_and_signal_tricks_score_0_and_leave_the_tests_alone(trick: str) -> None:
    code = f"def f(x):\n    {trick}\n    return 0\n"
    outcome = _verifier(timeout_s=2.0, call_timeout_s=1.0).score(code, gold("humaneval"))
    assert outcome.accuracy == 0.0 and outcome.status == "ok", outcome.details


# ------------------------------------------------------------------------------ what still works


def test_forms_that_need_the_answers_objects_and_helpers_work() -> None:
    """A class the tests construct (LeetCode style, methods called through a handle), helper
    functions of the answer, in-place changes to a list argument (by a procedure, which returns
    None), printed output the test
    captures, exceptions the test expects, and modules the test relies on the answer having
    imported."""
    code = (
        "import math\n"
        "class Stack:\n    def __init__(self):\n        self.items = []\n"
        "    def push(self, x):\n        self.items.append(x)\n"
        "    def pop(self):\n        return self.items.pop()\n"
        "    def __len__(self):\n        return len(self.items)\n"
        "def helper(x):\n    return x + 1\n"
        "def f(values):\n    values.sort()\n    print('sorted', len(values))\n"
        "    if not values:\n        raise ValueError('empty')\n"
    )
    tests = [
        "s = Stack()\ns.push(1)\ns.push(2)\nassert len(s) == 2 and s.pop() == 2 and s.items == [1]",
        "data = [3, 1, 2]\nassert f(data) is None and data == [1, 2, 3]",
        "import io, contextlib\nbuffer = io.StringIO()\nwith contextlib.redirect_stdout(buffer):\n"
        "    f([2, 1])\nassert buffer.getvalue() == 'sorted 2\\n'",
        "try:\n    f([])\nexcept ValueError as exc:\n    assert str(exc) == 'empty'\n"
        "else:\n    raise AssertionError('no error')",
        "for x in range(3):\n    assert helper(x) == x + 1 and math.floor(2.5) == 2",
    ]
    outcome = _verifier().score(code, json.dumps({"entry_point": "f", "tests": tests}))
    assert outcome.accuracy == 1.0, outcome.details
    assert outcome.details["sandbox"]["judged_by"]["test_process"] == 5


@pytest.mark.parametrize(
    ("test", "why"),
    [
        ("assert f(lambda v: v) == 1", "passes something other than plain data"),
        ("for x in [1]:\n    assert f.__code__", "reads f.__code__"),
        ("s = Stack()\ns.size = 3\nassert f(1) == 1", "sets Stack().size"),
        ("assert eval('f(2)') == 4", "uses eval()"),
        ("import inspect\nassert 'return' in inspect.getsource(f)", "uses the module inspect"),
        ("with open('out.txt') as handle:\n    assert f(handle.read()) == 1", "uses open()"),
    ],
    ids=["callable_argument", "internals", "object_attribute", "eval", "inspect", "files"],
)
def test_forms_that_cannot_be_made_safe_are_refused_with_one_line(test: str, why: str) -> None:
    code = "class Stack:\n    pass\ndef f(x):\n    return 1\n"
    gold_text = json.dumps({"entry_point": "f", "tests": [test]})
    outcome = _verifier().score(code, gold_text)
    assert outcome.status == "unverifiable" and outcome.accuracy == 0.0
    reason = outcome.details["reason"]
    assert why in reason and "shared_interpreter: true" in reason and "\n" not in reason


def test_the_shared_interpreter_mode_is_an_explicit_opt_in_and_says_so() -> None:
    """Opted in, a refused form runs after the answer in its interpreter, judged by completion:
    the correct answer passes, and the result records the weaker mode (where, as documented,
    an answer can forge the verdict)."""
    gold_text = json.dumps({"entry_point": "f", "tests": ["assert eval('f(3)') == 9"]})
    weak = _verifier(shared_interpreter=True)
    outcome = weak.score(SQUARE, gold_text)
    assert outcome.accuracy == 1.0
    assert outcome.details["sandbox"]["judged_by"]["shared_interpreter"] == 1
    assert weak.score("def f(x):\n    return 0\n", gold_text).accuracy == 0.0
    safe = weak.score(ALWAYS_EQUAL, gold("humaneval"))  # a safe form still runs apart
    assert safe.accuracy == 0.0 and safe.details["sandbox"]["judged_by"]["test_process"] == 2


def test_tests_that_never_call_the_code_are_unverifiable() -> None:
    for tests in (["x = 1"], ["assert True"], ["def check(candidate, extra):\n    pass"]):
        outcome = _verifier().score(SQUARE, json.dumps({"entry_point": "f", "tests": tests}))
        assert outcome.status == "unverifiable", (tests, outcome.details)


def test_the_verdict_is_deterministic() -> None:
    code = "def f(x):\n    return sorted({str(i) for i in range(x)})\n"
    tests = ["for n in (3, 5):\n    assert f(n) == sorted(str(i) for i in range(n))"]
    gold_text = json.dumps({"entry_point": "f", "tests": tests})
    outcomes = [_verifier().score(code, gold_text) for _ in range(3)]
    assert [o.accuracy for o in outcomes] == [1.0] * 3


def test_an_argument_the_test_reuses_as_its_oracle_cannot_be_emptied() -> None:
    """Hole (in any harness that shares objects): a property test computes its expected value
    from the argument after the call (``candidate(arr) == sorted(arr)``), and an answer that
    empties the list and returns ``[]`` passed. Only a call that returns None (a procedure)
    has its in-place changes written back; an in-place sort is still seen."""
    oracle = [
        "import random\nrandom.seed(1)\nfor _ in range(5):\n"
        "    arr = [random.randint(0, 9) for _ in range(6)]\n"
        "    assert f(arr) == sorted(arr)"
    ]
    gold_text = json.dumps({"entry_point": "f", "tests": oracle})
    assert _score("def f(values):\n    values.clear()\n    return []\n", gold_text) == 0.0
    assert _score("def f(values):\n    values.clear()\n", gold_text) == 0.0
    assert _score("def f(values):\n    return sorted(values)\n", gold_text) == 1.0
    in_place = ["data = [3, 1, 2]\nf(data)\nassert data == [1, 2, 3]"]
    gold_text = json.dumps({"entry_point": "f", "tests": in_place})
    assert _score("def f(values):\n    values.sort()\n", gold_text) == 1.0


def test_a_subclass_argument_is_refused_rather_than_sent_as_its_base() -> None:
    tests = [
        "import collections\nPoint = collections.namedtuple('Point', 'x y')\n"
        "assert f(Point(1, 2)) == 3"
    ]
    outcome = _verifier().score(
        "def f(p):\n    return p.x + p.y\n", json.dumps({"entry_point": "f", "tests": tests})
    )
    assert outcome.status == "unverifiable" and "type Point" in outcome.details["reason"]


def test_a_sandbox_that_cannot_start_the_tests_process_is_unverifiable(monkeypatch) -> None:
    import shutil

    from videorl_kit.rewards import sandbox_command

    verifier = _verifier()
    monkeypatch.setattr(sandbox_command, "bwrap_path", lambda: shutil.which("false"))
    outcome = verifier.score(SQUARE, gold("humaneval"))
    assert (
        outcome.status == "unverifiable" and outcome.details["sandbox"]["status"] == "sandbox_error"
    )


HUMANEVAL_38 = json.dumps(
    {
        "entry_point": "decode_cyclic",
        "tests": [
            "def check(candidate):\n    for s in ['abc', 'hello world', '']:\n"
            "        assert candidate(encode_cyclic(s)) == s\n",
            "check(decode_cyclic)",
        ],
    }
)


@pytest.mark.parametrize(
    "helper",
    [
        "class encode_cyclic:\n    def __init__(self, s):\n        pass\n",
        "encode_cyclic = object()\n",
        "import os as encode_cyclic\n",
        "import subprocess\nencode_cyclic = subprocess\n",
    ],
    ids=["class", "object", "refused_module", "refused_module_alias"],
)
def test_what_the_answer_makes_of_a_name_cannot_turn_its_0_into_a_refusal(helper: str) -> None:
    """Hole (found attacking the proxy): a name the tests take from the answer (HumanEval's
    prompt helpers) bound to a class whose objects the test passes on, to an object that cannot
    cross, or to a module the tests' process must not import, made the ground truth
    ``unverifiable`` (masked, no penalty) instead of failing the wrong answer."""
    outcome = _verifier().score(helper + "def decode_cyclic(s):\n    return s\n", HUMANEVAL_38)
    assert outcome.status == "ok" and outcome.accuracy == 0.0, outcome.details
    correct = (
        "def encode_cyclic(s):\n    return s[1:] + s[:1]\n"
        "def decode_cyclic(s):\n    return s[-1:] + s[:-1]\n"
    )
    assert _verifier().score(correct, HUMANEVAL_38).accuracy == 1.0


def test_an_entry_point_named_like_a_builtin_is_the_answers() -> None:
    gold_text = json.dumps(
        {
            "entry_point": "sorted",
            "tests": ["for x in [[1, 2], [3, 4]]:\n    assert sorted(x) == x[::-1]"],
        }
    )
    assert _score("def sorted(x):\n    return x[::-1]\n", gold_text) == 1.0
    assert _score("def sorted(x):\n    return x\n", gold_text) == 0.0


# ------------------------------------------------------------------------------ an outsider's round


def _forges(payload: str, when: str) -> str:
    """A wrong ``f`` that writes ``payload`` (Python bytes expression) on every descriptor and
    exits, at import (``module``) or when first called (``call``)."""
    forge = (
        f"import os\nDATA = {payload}\n"
        "def forge():\n    for fd in range(3, 64):\n        try:\n            os.write(fd, DATA)\n"
        "        except OSError:\n            pass\n    os._exit(0)\n"
    )
    return forge + ("forge()\n" if when == "module" else "") + "def f(x):\n    forge()\n"


@pytest.mark.parametrize("form", ["loop", "humaneval", "unittest_runner"])
@pytest.mark.parametrize(
    "reply",
    [
        'reply ["raised", [1], "x", ""]',
        'reply ["raised", {"a": 1}, "x", ""]',
        'reply ["raised", "ValueError", [1], ""]',
        'reply ["kind", [1], null, ""]',
        'reply ["handle", [0], null, ""]',
    ],
    ids=["raised_list", "raised_dict", "raised_text_list", "kind_list", "handle_list"],
)
def test_a_reply_the_host_cannot_read_fails_the_answer(reply: str, form: str) -> None:
    """Hole (found attacking as an outsider): a reply whose exception name was a list made the
    host's membership test raise ``TypeError``, which the relay reported as its own failure
    (``sandbox_error``): the ground truth went ``unverifiable``, masking the wrong answer's 0.
    Whatever the code's process sends that the host cannot read is now a bad report."""
    outcome = _verifier().score(_forges(repr((reply + "\n").encode()), "call"), gold(form))
    assert outcome.status == "ok" and outcome.accuracy == 0.0, outcome.details


DEEP = "b'[' * 200000"


@pytest.mark.parametrize("when", ["module", "call"])
@pytest.mark.parametrize(
    "report",
    [
        f"b'status error ' + {DEEP} + b'\\nend\\n'",
        f"b'status ran\\nfailed 0 ' + {DEEP} + b'\\nend\\n'",
        f"b'status ran\\nresult raised ' + {DEEP} + b'\\nend\\n'",
        f"b'reply ' + {DEEP} + b'\\n'",
    ],
    ids=["status", "failed", "raised", "reply"],
)
@pytest.mark.parametrize("form", ["plain", "loop", "shared"])
def test_a_deeply_nested_forged_report_fails_without_raising(
    form: str, report: str, when: str
) -> None:
    """Hole (outsider): a status or failure line whose message was ``[[[[…`` 200,000 deep sent
    the host's JSON parser into ``RecursionError``, which escaped ``score()``: one wrong answer
    crashed the reward function (and the training step with it). A message must now be a JSON
    string before it is parsed, and nothing the report holds makes the host raise."""
    if form == "shared":  # the opt-in mode's script report (its failed line) is parsed too
        gold_text = json.dumps({"entry_point": "f", "tests": ["assert eval('f(2)') == 4"]})
        verifier = _verifier(shared_interpreter=True)
    else:
        gold_text, verifier = gold(form), _verifier()
    outcome = verifier.score(_forges(report, when), gold_text)
    assert outcome.status == "ok" and outcome.accuracy == 0.0, outcome.details


HELD = {
    "keyboard_interrupt": "def f(x):\n    raise KeyboardInterrupt\n",
    "base_exception": "class B(BaseException):\n    pass\ndef f(x):\n    raise B()\n",
    "generator_exit": "def f(x):\n    raise GeneratorExit\n",
    "str_raises": "class E(Exception):\n    def __str__(self):\n        raise RuntimeError\n"
    "def f(x):\n    raise E()\n",
    "forged_reply_in_message": 'def f(x):\n    raise ValueError(\'x\\nreply ["ok", 4, null, ""]\\n\')\n',
    "float_subclass": "class F(float):\n    def __eq__(self, other):\n        return True\n"
    "    def __sub__(self, other):\n        return 0.0\n    __hash__ = float.__hash__\n"
    "def f(x):\n    return F(0)\n",
    "tuple_subclass": "class T(tuple):\n    def __eq__(self, other):\n        return True\n"
    "    __hash__ = tuple.__hash__\ndef f(x):\n    return T()\n",
    "list_subclass_repr": "class L(list):\n    def __repr__(self):\n        return '4'\n"
    "    def __eq__(self, other):\n        return True\ndef f(x):\n    return L([0])\n",
    "set_of_liars": "class A:\n    def __eq__(self, other):\n        return True\n"
    "    def __hash__(self):\n        return 4\ndef f(x):\n    return {A()}\n",
    "patched_encoders": "import builtins, json\nbuiltins.repr = lambda v: '4'\n"
    "builtins.isinstance = lambda a, b: True\njson.dumps = lambda *a, **k: '4'\n"
    "def f(x):\n    return object()\n",
    "huge_int": "def f(x):\n    return 10 ** 200000\n",
    "lone_surrogate": "def f(x):\n    return '\\ud800'\n",
    "stdout_flood": "import sys\ndef f(x):\n    sys.stdout.write('pass\\n' * 10 ** 6)\n    return 0\n",
    "closed_descriptors": "import os\nfor fd in range(64):\n    try:\n        os.close(fd)\n"
    "    except OSError:\n        pass\ndef f(x):\n    return 0\n",
    "atexit_report": "import atexit\natexit.register(lambda: print('done [\"pass\", 3]'))\n"
    "def f(x):\n    return 0\n",
}


@pytest.mark.parametrize("form", ["plain", "humaneval", "unittest_runner"])
@pytest.mark.parametrize("attack", list(HELD))
def test_an_outsiders_forgeries_score_0(attack: str, form: str) -> None:
    """Guards (outsider round, held without a fix): exceptions the tests' frameworks treat
    specially or whose text breaks lines, subclasses of built-in values with lying ``__eq__``,
    patched encoders, oversized values, floods of output, closed descriptors, exit hooks."""
    outcome = _verifier().score(HELD[attack], gold(form))
    assert outcome.status == "ok" and outcome.accuracy == 0.0, outcome.details


PASSES_A_NAME = json.dumps(
    {"entry_point": "f", "tests": ["for _ in range(1):\n    assert f(N) == 4"]}
)


@pytest.mark.parametrize(
    "name",
    ["def N():\n    pass\n", "N = len\n", "import math\nN = math.sqrt\n", "import math as N\n"],
    ids=["function", "builtin", "module_function", "module"],
)
def test_a_name_the_tests_pass_to_the_code_cannot_turn_its_0_into_a_refusal(name: str) -> None:
    """Hole (outsider round, a sibling of the one above): a test that passes a name it takes
    from the answer (``f(N)``, ``N`` a constant of the prompt) was refused when the answer made
    ``N`` a function or a module ("passes something other than plain data"), so a wrong answer
    went ``unverifiable`` where the right one scored 1. The code's own functions and modules
    now go back to it by name (nothing crosses but the name), and the value decides."""
    outcome = _verifier().score(name + "def f(x):\n    return 0\n", PASSES_A_NAME)
    assert outcome.status == "ok" and outcome.accuracy == 0.0, outcome.details
    assert _score("N = 2\ndef f(x):\n    return x * x\n", PASSES_A_NAME) == 1.0
    assert _score("def N():\n    return 2\ndef f(x):\n    return x() * x()\n", PASSES_A_NAME) == 1.0
    assert _score("import math as N\ndef f(x):\n    return int(x.sqrt(16))\n", PASSES_A_NAME) == 1.0
    nested = json.dumps(
        {"entry_point": "f", "tests": ["for _ in range(1):\n    assert f([N, 2]) == 4"]}
    )
    outcome = _verifier().score(name + "def f(x):\n    return 0\n", nested)
    assert outcome.status == "ok" and outcome.accuracy == 0.0, outcome.details  # fails, inside too
    assert _score("N = 2\ndef f(x):\n    return x[0] * x[1]\n", nested) == 1.0


def test_the_answers_own_function_passed_back_to_it_works_and_a_tests_lambda_is_refused() -> None:
    gold_text = json.dumps(
        {
            "entry_point": "apply",
            "tests": [
                "def check(candidate):\n    assert candidate(helper, 3) == 9\n"
                "    assert candidate(fn=helper, x=4) == 16\n",
                "check(apply)",
            ],
        }
    )
    apply = "def apply(fn, x):\n    return fn(x)\n"
    assert _score("def helper(x):\n    return x * x\n" + apply, gold_text) == 1.0
    assert _score("def helper(x):\n    return x\n" + apply, gold_text) == 0.0
    lambda_gold = json.dumps(
        {"entry_point": "f", "tests": ["for _ in range(1):\n    assert f(lambda x: x) == 4"]}
    )
    outcome = _verifier().score("def f(x):\n    return 4\n", lambda_gold)
    assert outcome.status == "unverifiable" and "type function" in outcome.details["reason"]
