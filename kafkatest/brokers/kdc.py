"""A Kerberos KDC in a JVM of its own, started and stopped like the kafka backend's broker.

Spark asks Kafka for a delegation token itself only once its driver has logged in to
Kerberos (`UserGroupInformation.isSecurityEnabled` and a keytab login): a test of that
path needs a KDC, and the kafka backend's way of running a JVM (its jars resolved from
Maven Central, the child tied to this process's life, its files in an owned temporary
directory) fits one. Hadoop's MiniKdc makes the realm, the principals and one keytab
holding them all, then serves on a loopback TCP port until it is stopped.

Kafka itself never sees Kerberos here: the driver obtains the token over SCRAM (see
`kafkatest.spark.token_provider`), so the brokers need no GSSAPI listener.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from kafkatest._ground import tempdirs
from kafkatest.brokers import process
from kafkatest.config import jvm_flags_for_tests
from kafkatest.errors import BrokerError, SetupError

#: What MiniKdc prints once the KDC serves and the keytab is written.
_RUNNING = "Standalone MiniKdc Running"
_NAME = re.compile(r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)?")


class Kdc:
    """A KDC for realm `realm` (``EXAMPLE.COM``) with `principals` in one keytab.

    ``with Kdc(["alice"]) as kdc:`` starts it; `principal("alice")` is
    ``alice@EXAMPLE.COM``, `keytab` holds every principal's key and `krb5_conf` is the
    client configuration a JVM is pointed at (``-Djava.security.krb5.conf``, see
    `java_options`). Closing stops the JVM and removes its files.
    """

    def __init__(
        self,
        principals: Sequence[str],
        *,
        organization: str = "EXAMPLE",
        domain: str = "COM",
        start_timeout_s: float = 60.0,
    ) -> None:
        if not principals:
            raise ValueError("a KDC needs at least one principal")
        for name in principals:
            if not _NAME.fullmatch(name):
                raise ValueError(f"bad principal name {name!r}: name or service/host, no realm")
        self.principals = tuple(principals)
        self.realm = f"{organization.upper()}.{domain.upper()}"
        self._organization = organization
        self._domain = domain
        self._start_timeout_s = start_timeout_s
        self._workdir: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self.port: int | None = None

    # -- files ------------------------------------------------------------------------

    @property
    def directory(self) -> Path:
        if self._workdir is None:
            raise BrokerError("the KDC is not started")
        return self._workdir

    @property
    def keytab(self) -> Path:
        """The keytab with every principal's key (what ``spark.kerberos.keytab`` names)."""
        return self.directory / "principals.keytab"

    @property
    def krb5_conf(self) -> Path:
        """The Kerberos client configuration: this realm, its KDC on 127.0.0.1, TCP only."""
        return self.directory / "kdc" / "krb5.conf"

    @property
    def log_path(self) -> Path:
        return self.directory / "kdc.log"

    def principal(self, name: str) -> str:
        """`name`'s full principal, ``name@REALM``."""
        if name not in self.principals:
            raise BrokerError(f"no principal {name!r} in this KDC (it has {self.principals})")
        return f"{name}@{self.realm}"

    def java_options(self) -> list[str]:
        """The JVM options that make a JVM's Kerberos use this KDC."""
        return [f"-Djava.security.krb5.conf={self.krb5_conf}"]

    # -- life -------------------------------------------------------------------------

    def start(self) -> Kdc:
        """Start MiniKdc and wait until it serves and the keytab is written."""
        if self._process is not None and self._process.poll() is None:
            return self
        java = shutil.which("java")
        if java is None:
            raise SetupError("the KDC runs on the JVM and Java is not on PATH: install JDK 17+")
        from kafkatest.jars.kdc import kdc_jars

        classpath = ":".join(str(jar) for jar in kdc_jars())
        self._workdir = workdir = tempdirs.owned_tempdir("kafkatest-kdc-")
        (workdir / "kdc").mkdir()
        properties = workdir / "kdc.properties"
        properties.write_text(
            "kdc.bind.address=127.0.0.1\n"
            f"org.name={self._organization}\norg.domain={self._domain}\n"
        )
        command = [
            java,
            "-Xmx128m",
            *jvm_flags_for_tests(),
            "-cp",
            classpath,
            "org.apache.hadoop.minikdc.MiniKdc",
            str(workdir / "kdc"),
            str(properties),
            str(self.keytab),
            *self.principals,
        ]
        self._process = process.spawn(command, self.log_path, workdir)
        try:
            self._wait_running()
        except BaseException:
            self.close()
            raise
        return self

    def _wait_running(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self._start_timeout_s
        while _RUNNING not in process.tail(self.log_path, 40):
            if self._process.poll() is not None:
                raise BrokerError(
                    f"the KDC exited ({self._process.returncode}) before it served:\n"
                    f"{process.tail(self.log_path)}"
                )
            if time.monotonic() > deadline:
                raise BrokerError(
                    f"the KDC did not serve within {self._start_timeout_s:.0f}s:\n"
                    f"{process.tail(self.log_path)}"
                )
            time.sleep(0.1)
        self._fix_krb5_conf()

    def _fix_krb5_conf(self) -> None:
        """MiniKdc names its KDC ``localhost`` whatever address it binds; say 127.0.0.1, so
        a host where localhost is ::1 first still reaches it (loopback only)."""
        text = self.krb5_conf.read_text()
        match = re.search(r"kdc_tcp_port = (\d+)", text)
        if match is None:
            raise BrokerError(f"no KDC port in MiniKdc's krb5.conf:\n{text}")
        self.port = int(match.group(1))
        self.krb5_conf.write_text(text.replace(f"localhost:{self.port}", f"127.0.0.1:{self.port}"))

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def close(self) -> None:
        """Stop the KDC and remove its realm, keytab and configuration."""
        if self._process is not None:
            process.terminate(self._process, grace_s=10.0)
            self._process = None
        if self._workdir is not None:
            tempdirs.remove(self._workdir)
            self._workdir = None
        self.port = None

    def __enter__(self) -> Kdc:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
