"""`kafkatest pytest`: re-runs forked from a process that has already imported pytest
and PySpark's Connect client.

With a warm Spark server, what a one-test re-run still waits for is mostly Python's:
importing pytest and the machine's plugins, PySpark's Connect client (pandas, pyarrow,
grpc), and the interpreter's collections at exit, about 2.5 s of a 3-3.5 s run, none
of it kafkatest's to cut inside one `pytest` process. Like Python's own
multiprocessing fork server and Rails' Spring, a fork server imports those once and
forks a child per run: the child takes the caller's terminal (its file descriptors,
passed over a Unix socket), working directory, environment and umask, runs pytest's
own entry point with the caller's arguments, and ends without the interpreter's
final collections (after running its atexit handlers, the preloaded modules' included,
as any exit does).

What is shared between runs is only what was imported before the fork: pytest, its
installed plugins, PySpark and the Connect client, kafkatest, and the modules named in
`pytest_server_preload`. The project's own modules, conftests and tests are imported by
each child, so edits to them are always seen. The server is made stale by any change it
could have missed: a preloaded module's file (an editable install's edit), a package
installed or removed on `sys.path`, another interpreter, or another value of a variable
that imported libraries read as they load (`PYTHON*`, `LD_*`, `PYSPARK_*`, `SPARK_*`,
`JAVA_*`, `ARROW_*`, `GRPC_*`): each combination has its own server, and a stale one
is replaced by the next run, which then pays the imports once.

Only its user reaches it: the socket is in a directory only they can enter, the
server checks the peer's uid (SO_PEERCRED) of every connection, and its state, log and
lock files are 0600. It reads connections side by side, each given 10 s for its whole
request, and refuses any request not of the client's shape (`requests`), so neither a
slow client nor a malformed request holds or ends it. It stops after
`pytest_server_idle_minutes` without a run (default 30), at `kafkatest pytest-server
stop`, and never outlives a reboot (a socket left by one is found dead and replaced).

This module's top imports only the standard library: the client runs in the
`kafkatest` command, where every import is paid by every run.
"""

from kafkatest.apps.pytest_forkserver.client import run, running_servers, stop_servers
from kafkatest.apps.pytest_forkserver.place import (
    ForkServerSettings,
    ForkServerUnavailable,
    servers_dir,
)

__all__ = [
    "ForkServerSettings",
    "ForkServerUnavailable",
    "run",
    "running_servers",
    "servers_dir",
    "stop_servers",
]
