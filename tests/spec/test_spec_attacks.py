"""Specs written by an attacker: every probe is refused with one line, bounded in memory and time.

Each test is an attack an outside tester ran (or the next one a careful attacker would try);
it fails if the hole reopens. Probes that could hang forever (a FIFO, an endless file)
run the real ``videorl-kit validate`` in a subprocess with a deadline.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from tests.spec.conftest import MINIMAL
from videorl_kit.core.spec_files import MAX_SPEC_BYTES
from videorl_kit.spec import SpecError, load_spec
from videorl_kit.spec.yaml_source import MAX_DEPTH, MAX_INCLUDE_DEPTH, MAX_INCLUDE_FILES

REPO = Path(__file__).resolve().parents[2]


def messages(path: Path | str) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return [str(issue) for issue in info.value.issues]


def validate(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``videorl-kit validate ARGS`` as a user runs it (a hang fails the test, not the run)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "videorl_kit", "validate", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def peak_bytes(call) -> int:
    tracemalloc.start()
    try:
        call()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


# -- reading is bounded --------------------------------------------------------------------


def test_include_of_an_endless_device_is_refused_without_reading_it(write, tmp_path):
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")  # inside the root, pointing out
    path = write("t.yaml", "include: zero.yaml\n" + MINIMAL)
    found = []
    assert peak_bytes(lambda: found.extend(messages(path))) < 4 * MAX_SPEC_BYTES
    assert found == [
        f"t.yaml:1: include: 'zero.yaml' is a link that points outside its root ({tmp_path})"
    ]


def test_spec_that_is_a_device_is_refused_with_one_line(write):
    assert messages("/dev/zero") == ["/dev/zero:1: not a regular file (a character device)"]


def test_include_of_a_fifo_is_refused_without_blocking(write, tmp_path):
    os.mkfifo(tmp_path / "_pipe.yaml")  # opening it for reading would wait for a writer forever
    write("t.yaml", "include: _pipe.yaml\n" + MINIMAL)
    proc = validate("t.yaml", cwd=tmp_path, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stdout.splitlines() == [
        "t.yaml:1: include: '_pipe.yaml' is not a regular file (a FIFO)",
        "0 of 1 specs valid",
    ]


def test_include_of_a_huge_file_reads_at_most_the_limit(write, tmp_path):
    (tmp_path / "_big.yaml").write_bytes(b"# " + b"x" * (64 * MAX_SPEC_BYTES) + b"\n")
    path = write("t.yaml", "include: _big.yaml\n" + MINIMAL)
    found = []
    assert peak_bytes(lambda: found.extend(messages(path))) < 4 * MAX_SPEC_BYTES
    assert found == [f"_big.yaml:1: larger than {MAX_SPEC_BYTES} bytes, the limit for a spec file"]


def test_a_folder_as_include_is_refused(write, tmp_path):
    (tmp_path / "sub").mkdir()
    assert messages(write("t.yaml", "include: sub\n" + MINIMAL)) == [
        "sub:1: not a regular file (a folder)"
    ]


def test_binary_include_names_the_byte_not_the_content(write, tmp_path):
    (tmp_path / "_bin.yaml").write_bytes(b"id: \xff\xfe secret\n")
    assert messages(write("t.yaml", "include: _bin.yaml\n" + MINIMAL)) == [
        "_bin.yaml:1: not UTF-8 text (invalid start byte at byte 4)"
    ]


# -- parsing is bounded --------------------------------------------------------------------


@pytest.mark.parametrize(
    "nested",
    [
        "a: " + "[" * 5000 + "]" * 5000 + "\n",  # beyond libyaml's own limit
        "a: " + "[" * 200 + "]" * 200 + "\n",  # beyond ours, within libyaml's
        "".join("  " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 5))
        + "  " * (MAX_DEPTH + 5)
        + "x\n",
    ],
    ids=["flow-5000", "flow-200", "block"],
)
def test_deep_nesting_is_one_line_not_a_recursion_error(write, nested):
    (message,) = messages(write("t.yaml", nested))
    assert message.startswith("t.yaml:") and "\n" not in message
    assert "nest" in message


def test_billion_laughs_is_refused_before_expanding(write):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n"
        for i in range(9)
    )
    (message,) = messages(write("t.yaml", bomb))
    assert message == ("t.yaml:2: b: aliases of mappings or lists are not supported; use include:")


def test_scalar_aliases_still_work(write):
    text = MINIMAL.replace("version: 1", "version: &v 1\ndescription: *v")
    assert messages(write("t.yaml", text)) == [
        "t.yaml:3: description: Input should be a valid string"
    ]


@pytest.mark.parametrize(
    "value",
    [
        "!!python/object/apply:os.system ['touch {marker}']",
        "!!python/object/new:os.system ['touch {marker}']",
        "!!python/name:os.system",
        "!!python/object:os.system {{a: 1}}",
        "!function utils.fn",
        "!!binary aGVsbG8=",
        "!!set {{a, b}}",
        "!!omap [a: 1]",
    ],
)
def test_yaml_tags_never_construct_objects(write, tmp_path, value):
    marker = tmp_path / "pwned"
    (message,) = messages(write("t.yaml", MINIMAL + f"extra: {value.format(marker=marker)}\n"))
    assert message.startswith("t.yaml:9: extra: unsupported YAML tag ")
    assert not marker.exists()


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("9" * 5000, "number longer than 64 characters"),  # int() of 5000 digits raises
        ("1:" * 40000 + "1", "number longer than 64 characters"),  # base-60, quadratic
        (str(2**63), "integer out of range (it must fit in 64 bits)"),
        ("0x" + "f" * 17, "integer out of range (it must fit in 64 bits)"),
    ],
    ids=["decimal", "sexagesimal", "2**63", "hex"],
)
def test_numbers_are_bounded(write, value, problem):
    assert messages(write("t.yaml", MINIMAL.replace("version: 1", f"version: {value}"))) == [
        f"t.yaml:2: version: {problem}"
    ]


def test_several_documents_are_refused(write):
    assert messages(write("t.yaml", MINIMAL + "---\nid: other\n")) == [
        "t.yaml:9: a spec file holds one YAML document (found '---')"
    ]


def test_a_hundred_thousand_keys_are_merged_in_linear_time_and_listed_briefly(write, tmp_path):
    keys = "".join(f"k{i}: {i}\n" for i in range(60_000))
    write("_base.yaml", keys)
    write("t.yaml", "include: _base.yaml\n" + MINIMAL + keys.replace(": ", ": -"))
    proc = validate("t.yaml", cwd=tmp_path, timeout=240)  # quadratic merging took hours
    *lines, summary = proc.stdout.splitlines()
    assert proc.returncode == 1 and len(lines) == 101 and summary == "0 of 1 specs valid"
    assert lines[0].startswith("t.yaml:10: k0: unknown key 'k0' (allowed: id, version, ")
    assert lines[-1] == "t.yaml:1: ... and 59900 more problems not listed"


def test_a_long_line_within_the_limit_loads(write):
    text = MINIMAL.replace("version: 1", f"version: 1\ndescription: {'y' * (MAX_SPEC_BYTES // 2)}")
    assert len(load_spec(write("t.yaml", text)).description) == MAX_SPEC_BYTES // 2


# -- includes --------------------------------------------------------------------------------


def test_a_long_acyclic_include_chain_is_cut(write):
    for i in range(MAX_INCLUDE_DEPTH + 4):
        write(f"_b{i}.yaml", f"include: _b{i + 1}.yaml\n")
    write(f"_b{MAX_INCLUDE_DEPTH + 4}.yaml", "version: 1\n")
    (message,) = messages(write("t.yaml", "include: _b0.yaml\n" + MINIMAL))
    assert message == (
        f"_b{MAX_INCLUDE_DEPTH - 2}.yaml:1: include: includes nest deeper than "
        f"{MAX_INCLUDE_DEPTH} files"
    )


def test_an_include_diamond_cannot_multiply_reads(write):
    for i in range(12):  # each level includes the next twice: 2**12 reads unbounded
        write(f"_d{i}.yaml", f"include: [_d{i + 1}.yaml, _d{i + 1}.yaml]\n")
    write("_d12.yaml", "version: 1\n")
    (message,) = messages(write("t.yaml", "include: _d0.yaml\n" + MINIMAL))
    assert message.endswith(f": a spec may read at most {MAX_INCLUDE_FILES} files")


def test_a_spec_including_itself_through_a_symlink_is_a_cycle(write, tmp_path):
    (tmp_path / "_alias.yaml").symlink_to(tmp_path / "t.yaml")
    path = write("t.yaml", "include: _alias.yaml\n" + MINIMAL)
    assert messages(path) == ["t.yaml:1: include: include cycle: t.yaml -> t.yaml"]


@pytest.mark.parametrize("entry", ["/etc/passwd", "../../../../../../etc/passwd"])
def test_includes_cannot_leave_the_spec_root(write, tmp_path, entry):
    (message,) = messages(write("t.yaml", f"include: {entry}\n" + MINIMAL))
    assert message.startswith(f"t.yaml:1: include: {entry!r} ")
    assert message.endswith(f"its root ({tmp_path})")


# -- no text of an included file in any message ----------------------------------------------

SECRET_FILES = {
    "mapping": (
        "api_token: SECRET-1\nproblem_type: SECRET-2\nverifier: {name: SECRET-3}\n"
        "budget: {video: {SECRET-4: 2}}\nid: SECRET-5\nprompt: {template: '{{ SECRET-6 }'}\n"
        "data: {path: SECRET-7/../../../x, fields: {SECRET-8: x}}\n"
    ),
    "params": "verifier: {name: numeric, params: {SECRET-1: 1, abs_tol: SECRET-2}}\n",
    "syntax": "x: [SECRET-1, {SECRET-2\n",
    "tag": "x: !SECRET-1 y\n",
    "alias": "x: *SECRET-1\n",
    "duplicate": "SECRET-1: 1\nSECRET-1: 2\n",
    "scalar": "root:$6$SECRET-1:19000:0:99999:7:::\n",
    "include": "include: SECRET-1.yaml\n",
    "template": "prompt: {template: '{{ x.SECRET-1 }}'}\n",
}


@pytest.mark.parametrize("content", SECRET_FILES.values(), ids=SECRET_FILES)
def test_included_files_are_never_quoted(write, tmp_path, content):
    write("_secret.yaml", content)
    found = messages(write("t.yaml", "include: _secret.yaml\nversion: 1\n"))
    assert found, "the secret file must cause at least one problem"
    assert all("SECRET" not in m and "$6$" not in m for m in found), found
    proc = validate("t.yaml", cwd=tmp_path)
    assert "SECRET" not in proc.stdout + proc.stderr


def test_the_named_file_is_still_quoted(write):
    (message,) = messages(write("t.yaml", MINIMAL + "budget: {video: {fsp: 2}}\n"))
    assert message == "t.yaml:9: budget.video.fsp: unknown key 'fsp'; did you mean 'fps'?"


# -- one line per problem, whatever the bytes --------------------------------------------------


@pytest.mark.parametrize("key", ["a\\nb", "\\e[2J\\e[31mred", "fps\\u202e", "x\\u0000y"])
def test_control_characters_in_keys_stay_on_one_escaped_line(write, key):
    (message,) = messages(write("t.yaml", MINIMAL + f'budget: {{video: {{"{key}": 1}}}}\n'))
    assert "\n" not in message and "\x1b" not in message and "\u202e" not in message
    assert message.startswith("t.yaml:9: budget.video.")


def test_look_alike_ids_are_refused(write):
    (message,) = messages(write("t.yaml", MINIMAL.replace("demo-count", "demo-c\u043eunt")))
    assert message.startswith("t.yaml:1: id: String should match pattern")


def test_a_spec_file_name_with_a_newline_prints_on_one_line(tmp_path):
    (tmp_path / "a\nb.yaml").write_text(MINIMAL + "colour: red\n")
    proc = validate(str(tmp_path / "a\nb.yaml"), cwd=tmp_path)
    line, _summary = proc.stdout.splitlines()
    assert line.startswith("'a\\nb.yaml':9: colour: unknown key 'colour'")
