"""The seccomp filter of the code sandbox: a classic-BPF program bubblewrap loads before exec.

The sandboxed interpreter runs in its own user, PID, network, mount and IPC namespaces; this
filter closes what namespaces leave open or what a kernel does not limit for every user:

* **no new processes or threads**: ``fork``, ``vfork`` and ``clone`` fail with ``EPERM``, and
  ``clone3`` with ``ENOSYS`` (C libraries then fall back to ``clone``). Threads are refused too:
  ``RLIMIT_NPROC`` does not bind a process whose kernel uid is root, which is what a sandbox
  started by root runs as, and 25,000 threads with 16 KB stacks fit in 512 MB of address space:
  they took every PID of a host whose ``kernel.pid_max`` is 32768;
* **no host-wide pools**: kernel AIO contexts (``io_setup``, from ``fs.aio-max-nr``) and inotify
  instances (counted per kernel user: root's, for a sandbox started by root) would be taken from
  the whole host's share; ``memfd_create`` files hold memory outside the address-space limit
  (60 of 4 MB each added 240 MB to a 512 MB child);
* **no changing host inodes**: the ``chmod`` family, extended attributes (a POSIX ACL is a mode
  too) and ``file_setattr`` are refused. The four devices are the host's own nodes, bound in
  writable (a read-only bind would also forbid opening them), and a sandbox started by root owns
  them (its kernel uid is root), so ``chmod("/dev/null", 0)`` would change them for every user
  of the host;
* **no reaching into other processes or the kernel**: ``ptrace``, ``process_vm_readv/writev``,
  ``pidfd_getfd``, ``kcmp``, keyrings, ``bpf``, ``perf_event_open``, ``userfaultfd``, io_uring,
  module loading, ``kexec``, ``reboot``, clock and host-name changes, ``syslog``, ``acct``,
  swap, quotas, ``fanotify``, port I/O and ``modify_ldt``;
* **no file-system tricks**: ``mount`` and the new mount API (``open_tree_attr`` too),
  ``pivot_root``, ``chroot``, ``unshare``, ``setns``, ``mknod``,
  ``open_by_handle_at``/``name_to_handle_at``;
* **no sockets** (the network namespace already has only a loopback of its own);
* other architectures' system-call tables (32-bit and x32 entry points) are refused outright,
  and so are numbers past the last call this table knows (469, ``file_setattr``, Linux 6.17):
  a newer kernel's calls are not open by default (they report ``ENOSYS``, as on an older
  kernel).

Denied calls return ``EPERM`` (the code sees an ordinary ``PermissionError``); a call through a
foreign architecture's table kills the process. Only x86_64 is supported: elsewhere
:func:`seccomp_program` raises :class:`UnsupportedArchitecture` and the code sandbox refuses to
start (see :mod:`videorl_kit.rewards.sandbox`).

Example:
    >>> program = seccomp_program("x86_64")
    >>> len(program) % 8, len(program) // 8 > 60
    (0, True)
    >>> seccomp_program("sparc")
    Traceback (most recent call last):
    ...
    videorl_kit.rewards.seccomp.UnsupportedArchitecture: no seccomp table for sparc (only x86_64)
"""

from __future__ import annotations

import errno
import struct

from videorl_kit.core.errors import VideoRLKitError

#: ``AUDIT_ARCH_*`` value and system-call numbers per machine (``platform.machine()`` names).
_ARCH_X86_64 = 0xC000003E
#: The first number past the calls this module knows (469, file_setattr); x32 numbers (bit 30
#: set) lie beyond it too.
_FIRST_UNKNOWN_X86_64 = 470

#: System calls refused with EPERM on x86_64 (number: name, for the reader).
_DENIED_X86_64: dict[int, str] = {
    41: "socket",
    56: "clone",
    57: "fork",
    58: "vfork",
    90: "chmod",
    91: "fchmod",
    101: "ptrace",
    103: "syslog",
    133: "mknod",
    134: "uselib",
    135: "personality",
    153: "vhangup",
    154: "modify_ldt",
    155: "pivot_root",
    156: "_sysctl",
    159: "adjtimex",
    161: "chroot",
    163: "acct",
    164: "settimeofday",
    165: "mount",
    166: "umount2",
    167: "swapon",
    168: "swapoff",
    169: "reboot",
    170: "sethostname",
    171: "setdomainname",
    172: "iopl",
    173: "ioperm",
    175: "init_module",
    176: "delete_module",
    179: "quotactl",
    188: "setxattr",
    189: "lsetxattr",
    190: "fsetxattr",
    197: "removexattr",
    198: "lremovexattr",
    199: "fremovexattr",
    206: "io_setup",
    212: "lookup_dcookie",
    227: "clock_settime",
    246: "kexec_load",
    248: "add_key",
    249: "request_key",
    250: "keyctl",
    253: "inotify_init",
    259: "mknodat",
    268: "fchmodat",
    272: "unshare",
    294: "inotify_init1",
    298: "perf_event_open",
    300: "fanotify_init",
    303: "name_to_handle_at",
    304: "open_by_handle_at",
    305: "clock_adjtime",
    308: "setns",
    310: "process_vm_readv",
    311: "process_vm_writev",
    312: "kcmp",
    313: "finit_module",
    319: "memfd_create",
    320: "kexec_file_load",
    321: "bpf",
    323: "userfaultfd",
    425: "io_uring_setup",
    426: "io_uring_enter",
    427: "io_uring_register",
    428: "open_tree",
    429: "move_mount",
    430: "fsopen",
    431: "fsconfig",
    432: "fsmount",
    433: "fspick",
    438: "pidfd_getfd",
    442: "mount_setattr",
    443: "quotactl_fd",
    447: "memfd_secret",
    452: "fchmodat2",
    463: "setxattrat",
    466: "removexattrat",
    467: "open_tree_attr",
    469: "file_setattr",
}
_CLONE3_X86_64 = 435

# Classic BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
# Offsets in struct seccomp_data: nr, arch.
_OFFSET_NR = 0
_OFFSET_ARCH = 4


class UnsupportedArchitecture(VideoRLKitError, RuntimeError):
    """There is no system-call table for this machine, so no filter can be built."""


def seccomp_program(machine: str) -> bytes:
    """The filter for ``machine`` (``platform.machine()``) as bubblewrap's ``--seccomp`` expects.

    The bytes are an array of ``struct sock_filter`` (``u16 code, u8 jt, u8 jf, u32 k``, native
    byte order). Raises :class:`UnsupportedArchitecture` for anything but x86_64.
    """
    if machine not in ("x86_64", "amd64", "AMD64"):
        raise UnsupportedArchitecture(f"no seccomp table for {machine} (only x86_64)")
    denied = sorted(_DENIED_X86_64)
    # Layout: header, one test per denied call, then the shared return blocks.
    #   0 ld arch; 1 jeq x86_64 else KILL; 2 ld nr; 3 jge first unknown (x32 too) -> NOSYS;
    #   4 jeq clone3 -> NOSYS; 5.. jeq nr -> DENY; ALLOW; DENY; NOSYS; KILL
    first_test = 5
    allow = first_test + len(denied)
    deny, nosys, kill = allow + 1, allow + 2, allow + 3

    def jump(at: int, k: int, true_to: int, false_to: int, op: int = _JEQ_K) -> tuple:
        return (op, true_to - at - 1, false_to - at - 1, k)

    program: list[tuple[int, int, int, int]] = [
        (_LD_W_ABS, 0, 0, _OFFSET_ARCH),
        jump(1, _ARCH_X86_64, 2, kill),
        (_LD_W_ABS, 0, 0, _OFFSET_NR),
        jump(3, _FIRST_UNKNOWN_X86_64, nosys, 4, op=_JGE_K),
        jump(4, _CLONE3_X86_64, nosys, first_test),
    ]
    for index, number in enumerate(denied):
        at = first_test + index
        program.append(jump(at, number, deny, at + 1))
    program += [
        (_RET_K, 0, 0, _RET_ALLOW),
        (_RET_K, 0, 0, _RET_ERRNO | errno.EPERM),
        (_RET_K, 0, 0, _RET_ERRNO | errno.ENOSYS),
        (_RET_K, 0, 0, _RET_KILL_PROCESS),
    ]
    for code, jt, jf, _ in program:
        if not (0 <= jt <= 255 and 0 <= jf <= 255):  # pragma: no cover - a layout bug
            raise AssertionError(f"BPF jump out of range in instruction {code:#x}")
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)


def denied_syscalls() -> tuple[str, ...]:
    """Names of the system calls the filter refuses (``clone3`` aside, which gets ``ENOSYS``).

    Example:
        >>> {"ptrace", "mount", "socket", "fork", "clone", "chmod"} <= set(denied_syscalls())
        True
    """
    return tuple(_DENIED_X86_64.values())
