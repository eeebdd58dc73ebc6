"""How the code sandbox's child is started: interpreter, environment, bubblewrap command line.

The child is the real interpreter (a virtual environment's ``python`` is a link to it) running
:mod:`videorl_kit.rewards.sandbox_child`'s source with ``-S -s -B -P -c``: no ``site``, no
user site, no bytecode writes, no script directory on ``sys.path``. Its environment is built
from scratch; ``PYTHONHASHSEED=0`` makes the order of sets and dicts of strings the same on every
run (so verdicts are deterministic), which is why ``-E``/``-I`` are not used.

Under bubblewrap the child sees a read-only root holding only the system's shared libraries, the
interpreter and its standard library (``site-packages`` hidden), four devices and a private
tmpfs at ``/work``; see :mod:`videorl_kit.rewards.sandbox` for the whole isolation.

Example:
    >>> argv, cwd, env = bwrap_command(1 << 24, seccomp_fd=7, info_fd=8)
    >>> "--unshare-net" in argv and "--disable-userns" in argv and cwd == "/"
    True
    >>> child_env("/work")["PYTHONHASHSEED"]
    '0'
"""

from __future__ import annotations

import functools
import marshal
import os
import shutil
import sys
import sysconfig
import types
from pathlib import Path

from videorl_kit.rewards import sandbox_child

SANDBOX_UID = 65534
WORKDIR = "/work"
_SYSTEM_LIBRARY_DIRS = ("/lib", "/lib64", "/lib32", "/libx32", "/usr/lib", "/usr/lib64")
_DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")


# The child's program arrives compiled (marshalled ahead of its request on stdin), so that no
# child spends its start-up compiling it: the command line only unpacks and runs it.
_BOOTSTRAP = (
    "# What runs inside the code sandbox: videorl_kit.rewards.sandbox_child, compiled\n"
    "import marshal, sys\n"
    "program, request = marshal.loads(sys.stdin.buffer.read())\n"
    "scope = {'__name__': 'sandbox_child', '__builtins__': __builtins__}\n"
    "exec(program, scope)\n"
    "del program, sys, marshal\n"
    "scope['child_main'](request)\n"
)


@functools.lru_cache(maxsize=1)
def child_program() -> types.CodeType:
    """``sandbox_child``'s code, compiled once per process (the child is this interpreter)."""
    source = Path(sandbox_child.__file__).read_text(encoding="utf-8")
    return compile(source, sandbox_child.__file__, "exec", dont_inherit=True)


def child_payload(request: dict[str, object]) -> bytes:
    """What the child reads on stdin: its compiled program and ``request``, marshalled.

    Example:
        >>> import marshal
        >>> marshal.loads(child_payload({"code": ""}))[1]
        {'code': ''}
    """
    return marshal.dumps((child_program(), request))


@functools.lru_cache(maxsize=1)
def interpreter() -> str:
    """The real interpreter binary (a virtual environment's ``python`` is a link to it)."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def python_argv() -> list[str]:
    """The child's command line (without bubblewrap)."""
    return [interpreter(), "-S", "-s", "-B", "-P", "-c", _BOOTSTRAP]


def child_env(workdir: str) -> dict[str, str]:
    """The child's whole environment, with ``workdir`` as its home and temporary directory."""
    return {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": workdir,
        "TMPDIR": workdir,
        "PYTHONHASHSEED": "0",
        "PYTHONUTF8": "1",
    }


def bwrap_path() -> str | None:
    """Where ``bwrap`` is, or ``None``."""
    return shutil.which("bwrap") or (
        "/usr/bin/bwrap" if os.access("/usr/bin/bwrap", os.X_OK) else None
    )


def bwrap_command(
    tmp_bytes: int, *, seccomp_fd: int, info_fd: int
) -> tuple[list[str], str, dict[str, str]]:
    """``(argv, cwd, env)`` of bubblewrap running the child; ``/work`` holds ``tmp_bytes``."""
    bwrap = bwrap_path()
    if bwrap is None:
        raise FileNotFoundError("bwrap is not installed")
    argv = [
        bwrap,
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--hostname",
        "sandbox",
        *_filesystem_args(),
        "--size",
        str(tmp_bytes),
        "--perms",
        "0700",
        "--tmpfs",
        WORKDIR,
        "--remount-ro",
        "/",
        "--chdir",
        WORKDIR,
        "--clearenv",
        *[arg for key, value in child_env(WORKDIR).items() for arg in ("--setenv", key, value)],
        "--seccomp",
        str(seccomp_fd),
        "--info-fd",
        str(info_fd),
        *python_argv(),
    ]
    return argv, "/", {"PATH": "/usr/bin:/bin"}


@functools.lru_cache(maxsize=1)
def _filesystem_args() -> tuple[str, ...]:
    """Read-only mounts: system libraries, the interpreter, its standard library, ``/dev``."""
    args: list[str] = []
    mounted: list[str] = []

    def covered(path: str) -> bool:
        return any(path == root or path.startswith(root + "/") for root in mounted)

    for path in _SYSTEM_LIBRARY_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
            mounted.append(path)
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    libpython = os.path.join(
        sysconfig.get_config_var("LIBDIR") or "", sysconfig.get_config_var("INSTSONAME") or ""
    )
    for path in (interpreter(), stdlib, os.path.realpath(libpython)):
        if os.path.exists(path) and not covered(path):
            args += ["--ro-bind", path, path]
    for hidden in (os.path.join(stdlib, "site-packages"), os.path.join(stdlib, "dist-packages")):
        if os.path.isdir(hidden):
            args += ["--size", "4096", "--tmpfs", hidden, "--remount-ro", hidden]
    args += ["--dir", "/dev"]
    for device in _DEVICES:
        if os.path.exists(device):
            args += ["--dev-bind", device, device]
    return tuple(args)
