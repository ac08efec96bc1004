"""Helpers of the mail tests: a daemon with the mail system on free ports, IMAP
through a sandbox's unix socket, and Dovecot's processes."""
import imaplib
import os
import socket

import pytest

from conftest import Daemon

HERE = os.path.dirname(os.path.abspath(__file__))
USERS = os.path.join(HERE, "..", "data", "mail", "users_sample.json")
DOVECOT = "/usr/sbin/dovecot"

needs_dovecot = pytest.mark.skipif(not os.path.exists(DOVECOT),
                                   reason="Dovecot is not installed (scripts/install-deps)")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class MailDaemon(Daemon):
    def __init__(self, tmp_root, extra=(), **kw):
        # The mail processes run as the dovecot user: the data dir's parents
        # must let it through (mcpbox checks and says so otherwise).
        os.chmod(tmp_root, 0o711)
        self.imap_port = free_port()
        self.smtp_port = free_port()
        super().__init__(os.path.join(tmp_root, "var"), extra_args=[
            "--mail-users", USERS, "--mail-imap", "127.0.0.1:%d" % self.imap_port,
            "--mail-smtp", "127.0.0.1:%d" % self.smtp_port, *extra], **kw)

    def mail_root(self):
        return os.path.join(self.data_dir, "mail")

    def sock(self, sandbox_id, name):
        return os.path.join(self.mail_root(), "sock", sandbox_id, name + ".sock")

    def imap(self):
        return imaplib.IMAP4("127.0.0.1", self.imap_port)


class UnixIMAP(imaplib.IMAP4):
    """imaplib over a sandbox's imap.sock (what the forwarder inside relays to)."""

    def __init__(self, path):
        self._path = path
        super().__init__()

    def open(self, host="", port=0, timeout=None):
        self.host, self.port = host, port
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(self._path)
        self.file = self.sock.makefile("rb")


def smtp_unix(path):
    import smtplib

    class UnixSMTP(smtplib.SMTP):
        def _get_socket(self, host, port, timeout):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(30)
            s.connect(path)
            return s
    s = UnixSMTP()
    s.connect("localhost", 25)
    return s


SESSION_PROCS = ("imap", "lmtp", "auth-worker")


def dovecot_processes(mail_root):
    """pids of the Dovecot of this data dir: the master and its children that
    do not come and go with sessions (imap, lmtp, auth-worker do)."""
    pidfile = os.path.join(mail_root, "run", "master.pid")
    master = int(open(pidfile).read().split()[0])
    out = [master]
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = open("/proc/%s/stat" % pid).read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        try:
            cmd = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")[0].decode()
        except OSError:
            continue
        if ppid == master and cmd.split(" ")[0].rsplit("/", 1)[-1] not in SESSION_PROCS:
            out.append(int(pid))
    return out
