"""A throwaway OpenLDAP directory for the tests: Debian's ``slapd`` (``.ci/run`` installs it) on a free loopback
port, run as the current user with its config (slapd.conf, an mdb database) and data in a folder of its own, so
it neither needs nor meets a system slapd. Seeded with ``slapadd`` before it starts (about a second).

The directory, ``dc=example,dc=org``:
- people under ou=people (inetOrgPerson, uid): alice (in rag-admins), bob (in staff), carol (in no group),
  dora (password with non-ASCII letters; in 研发 "R&D", a group name to map), erin (a posixGroup member only),
  jörg (a name beyond ASCII); each with mail NAME@example.org;
- groups under ou=groups: rag-admins, staff, 研发 (groupOfNames), posix-staff (posixGroup: memberUid);
- cn=reader,dc=example,dc=org: a service account that may search; anonymous users may read nothing.
"""

from __future__ import annotations

import base64
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from ldap3 import MODIFY_ADD, MODIFY_DELETE, Connection, Server

SUFFIX = "dc=example,dc=org"
ROOT_DN = f"cn=admin,{SUFFIX}"
ROOT_PASSWORD = "root secret"
READER_DN = f"cn=reader,{SUFFIX}"
READER_PASSWORD = "reader secret"
PEOPLE = f"ou=people,{SUFFIX}"
GROUPS = f"ou=groups,{SUFFIX}"
# name: (password, display name)
USERS = {
    "alice": ("alice in ldap", "Alice Admin"),
    "bob": ("bob in ldap", "Bob Staff"),
    "carol": ("carol in ldap", "Carol Nogroup"),
    "dora": ("dörte's pässwörd 密码", "Dörte Müller"),
    "erin": ("erin in ldap", "Erin Posix"),
    "jörg": ("jörg in ldap", "Jörg Umlaut"),  # a name beyond what this app takes for a user name
}
MEMBERS = {"rag-admins": ["alice"], "staff": ["bob"], "研发": ["dora"]}
SCHEMAS = ("core", "cosine", "nis", "inetorgperson")


def user_dn(name: str) -> str:
    return f"uid={name},{PEOPLE}"


def group_dn(name: str) -> str:
    return f"cn={name},{GROUPS}"


def _conf(folder: Path) -> str:
    schemas = "\n".join(f"include /etc/ldap/schema/{s}.schema" for s in SCHEMAS)
    return f"""{schemas}
pidfile {folder}/slapd.pid
TLSCACertificateFile {folder}/ca.pem
TLSCertificateFile {folder}/server.pem
TLSCertificateKeyFile {folder}/server.key
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
maxsize 16777216
suffix "{SUFFIX}"
rootdn "{ROOT_DN}"
rootpw "{ROOT_PASSWORD}"
directory {folder}/db
access to attrs=userPassword by anonymous auth by self write by * none
access to * by users read by * none
"""


def _ldif(text: str) -> str:
    """``text`` (lines "attr: value") as LDIF wants it: a value beyond ASCII written in base64 ("attr:: ...")."""
    lines = []
    for line in text.splitlines():
        attr, value = line.split(": ", 1)
        lines.append(line if value.isascii() else f"{attr}:: {base64.b64encode(value.encode()).decode()}")
    return "\n".join(lines)


def _seed() -> str:
    entries = [
        f"dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example",
        f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people",
        f"dn: {GROUPS}\nobjectClass: organizationalUnit\nou: groups",
        f"dn: {READER_DN}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\ncn: reader\n"
        f"userPassword: {READER_PASSWORD}",
    ]
    for name, (password, display) in USERS.items():
        entries.append(
            f"dn: {user_dn(name)}\nobjectClass: inetOrgPerson\nuid: {name}\ncn: {display}\nsn: {display.split()[-1]}\n"
            f"mail: {name}@example.org\nuserPassword: {password}"
        )
    for group, members in MEMBERS.items():
        # groupOfNames must keep a member: the service account is in each, so a test may empty one of people
        lines = "\n".join(f"member: {dn}" for dn in [READER_DN, *map(user_dn, members)])
        entries.append(f"dn: {group_dn(group)}\nobjectClass: groupOfNames\ncn: {group}\n{lines}")
    entries.append(f"dn: {group_dn('posix-staff')}\nobjectClass: posixGroup\ncn: posix-staff\ngidNumber: 5000\n"
                   "memberUid: erin")  # fmt: skip
    return "\n\n".join(_ldif(e) for e in entries) + "\n"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _certificates(folder: Path) -> None:
    """A CA of the test's own (ca.pem) and the server's certificate from it, for the name localhost only (not
    127.0.0.1, so an address the certificate does not name can be tried too)."""
    openssl = ("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-days", "2")
    _run(*openssl, "-x509", "-keyout", f"{folder}/ca.key", "-out", f"{folder}/ca.pem", "-subj", "/CN=ragapp test CA",
         "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")  # fmt: skip
    _run(*openssl, "-keyout", f"{folder}/server.key", "-out", f"{folder}/server.csr", "-subj", "/CN=localhost")
    (folder / "server.ext").write_text("subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n", "utf-8")
    _run("openssl", "x509", "-req", "-in", f"{folder}/server.csr", "-CA", f"{folder}/ca.pem", "-CAkey",
         f"{folder}/ca.key", "-CAcreateserial", "-days", "2", "-extfile", f"{folder}/server.ext",
         "-out", f"{folder}/server.pem")  # fmt: skip


class Slapd:
    """The directory, started; ``url`` is where it answers (ldap://, StartTLS offered), ``tls_port`` where it
    answers ldaps://, ``ca_file`` the CA its certificate (for localhost) is from; ``stop()`` ends it and removes
    its folder."""

    def __init__(self) -> None:
        if shutil.which("slapd") is None and not Path("/usr/sbin/slapd").exists():
            raise RuntimeError("slapd not found: install Debian's slapd and ldap-utils (see .ci/run).")
        self.folder = Path(tempfile.mkdtemp(prefix="ragapp-slapd-"))
        (self.folder / "db").mkdir()
        conf = self.folder / "slapd.conf"
        conf.write_text(_conf(self.folder), "utf-8")
        seed = self.folder / "seed.ldif"
        seed.write_text(_seed(), "utf-8")
        _run("/usr/sbin/slapadd", "-f", str(conf), "-l", str(seed))
        _certificates(self.folder)
        self.ca_file = self.folder / "ca.pem"
        self.port, self.tls_port = _free_port(), _free_port()
        self.url = f"ldap://127.0.0.1:{self.port}"
        # -d 0: in the foreground (no fork), so this process is slapd itself and stop() ends it.
        self.log = (self.folder / "slapd.log").open("wb")
        self.process = subprocess.Popen(
            ["/usr/sbin/slapd", "-f", str(conf), "-h", f"{self.url}/ ldaps://127.0.0.1:{self.tls_port}/", "-d", "0"],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self._wait()

    def _wait(self) -> None:
        for _ in range(300):
            if self.process.poll() is not None:
                raise RuntimeError(f"slapd ended at start: {(self.folder / 'slapd.log').read_text('utf-8', 'replace')}")
            if all(_listens(port) for port in (self.port, self.tls_port)):
                return
            time.sleep(0.1)
        raise RuntimeError("slapd did not listen within 30 s")

    def admin(self) -> Connection:
        """A connection bound as the directory's root, to change it during a test."""
        return Connection(Server(self.url), ROOT_DN, ROOT_PASSWORD, auto_bind=True)

    def move(self, name: str, leave: str, join: str) -> None:
        """``name`` leaves the group ``leave`` and joins ``join`` (groupOfNames)."""
        conn = self.admin()
        try:
            for group, change in ((leave, MODIFY_DELETE), (join, MODIFY_ADD)):
                assert conn.modify(group_dn(group), {"member": [(change, [user_dn(name)])]}), conn.result
        finally:
            conn.unbind()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _listens(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _run(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip() or done.stdout.strip()}")
