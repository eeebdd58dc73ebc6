"""Outsider red-team, round 2 (after issue 19): each test asserts the SAFE behaviour.

Written through the public surface only (``reward_function_for``, the CLI, generated files);
every test here failed on the commit it was written against. The inputs are the attacker's,
kept minimal.
"""

from __future__ import annotations

import json
import shutil

import pytest

from videorl_kit.rewards import reward_function_for

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")


def _code_score(code: str, tests: list[str], entry_point: str = "f") -> tuple[float, str, dict]:
    fn = reward_function_for("code")
    gold = json.dumps({"entry_point": entry_point, "tests": tests})
    result = fn("```python\n" + code + "\n```", gold)
    return result.accuracy, result.status, result.details


# -- 1. code_exec: a class as the entry point answers the tests' own expected values ---------
#
# In the test process, calling an answer's class gives a handle whose methods and `in` are
# calls into the answer's process: the answer receives the test's expected value as an argument
# and says "yes". Plain-call tests (mode 1) refuse the same object ("not data"); the other forms
# accept it, so a class that implements nothing scores 1.

LYING_CLASS = (
    "class f:\n"
    "    def __init__(self, *args):\n"
    "        pass\n"
    "    def __contains__(self, item):\n"
    "        return True\n"
    "    def startswith(self, *args):\n"
    "        return True\n"
    "    def issubset(self, other):\n"
    "        return True\n"
    "    def __eq__(self, other):\n"
    "        return True\n"
)

HANDLE_FORMS = {
    "humaneval_in": ["def check(candidate):\n    assert 'q' in candidate('xyz')\ncheck(f)"],
    "loop_in": ["for x, y in [([1, 2], 3), ([5], 6)]:\n    assert y in f(x)"],
    "pytest_in": ["def test_a():\n    assert 'b' in f('zzz')\n"],
    "unittest_assertIn": [
        "import unittest\n"
        "class T(unittest.TestCase):\n"
        "    def test_c(self):\n"
        "        self.assertIn('b', f('zzz'))\n"
    ],
    "humaneval_startswith": [
        "def check(candidate):\n    assert candidate('abc').startswith('zz')\ncheck(f)"
    ],
    "humaneval_issubset": [
        "def check(candidate):\n    assert candidate([1]).issubset({7, 8})\ncheck(f)"
    ],
    "explicit_eq_method": ["def check(candidate):\n    assert candidate(2).__eq__(4)\ncheck(f)"],
}


@needs_bwrap
@pytest.mark.parametrize("form", sorted(HANDLE_FORMS))
def test_class_entry_point_cannot_answer_the_tests_expected_values(form: str) -> None:
    accuracy, status, details = _code_score(LYING_CLASS, HANDLE_FORMS[form])
    assert accuracy == 0.0, (form, status, details.get("sandbox"))


# -- 2. code_exec: a name set by one test string is read from the answer in the next --------
#
# Tests given as several strings, the first a setup (MBPP's test_setup_code layout). The plain
# assignment is judged on the host (mode 1), the later string runs in the test process (mode 2),
# which does not see the setup's name and looks it up in the *answer's* module: the answer
# supplies the expected value. A wrong function scores 1 and the right one 0.

SPLIT_SETUP_TESTS = ["EXPECTED = 4", "assert f(2) == EXPECTED"]


@needs_bwrap
def test_setup_name_of_an_earlier_test_string_is_not_taken_from_the_answer() -> None:
    wrong = "def f(x):\n    return 0\nEXPECTED = 0\n"
    accuracy, status, details = _code_score(wrong, SPLIT_SETUP_TESTS)
    assert accuracy == 0.0, (status, details.get("sandbox"))


@needs_bwrap
def test_setup_name_of_an_earlier_test_string_serves_the_right_answer() -> None:
    right = "def f(x):\n    return x * x\n"
    accuracy, status, details = _code_score(right, SPLIT_SETUP_TESTS)
    # the right answer passes, or the ground truth is refused as a whole: never a plain 0
    assert accuracy == 1.0 or status == "unverifiable", (status, details.get("sandbox"))


# -- 3. numerical: an open range commits to no value -----------------------------------------
#
# "at least 4" and "4 or more" state every count from 4 up; both score 1 against gold 4, so a
# policy can answer "at least N" for the smallest plausible N. A range ("3-5", "between 3 and 5")
# already scores 0; an open range is the same hedge.


@pytest.mark.parametrize("answer", ["at least 4", "4 or more"])
def test_numerical_open_range_is_a_hedge(answer: str) -> None:
    result = reward_function_for("numerical")(f"<answer>{answer}</answer>", "4")
    assert result.accuracy == 0.0, (answer, result.details)
