"""Import a library without the optional packages it would pull in for nothing.

Two of kafkatest's dependencies import a large optional package as they load, for a
feature a test run does not use: kio imports hypothesis (0.2 s) to register property
test strategies, and PySpark's Connect client imports IPython (0.3 s) to size its
progress bar (off unless SPARK_CONNECT_PROGRESS_BAR_ENABLED=1) to the terminal. A warm re-run of one test lasts about 3 s, so
each is a tenth of it.

`hidden_from_this_thread` makes those imports fail, as if the package were not
installed, for the thread that loads the library and for the length of the load
only: the library then takes its own fallback (kio defines its types without the
strategies, PySpark assumes an 80-column terminal). Other threads, and code that
imports the package later, get it as usual. A package that is already imported is
never hidden: whoever imported it (a notebook, a property test) keeps the library's
full behaviour.

The Connect client's load also runs with the garbage collector paused
(`collection_paused`): what a load makes is not garbage, and the collector's full
passes over it cost a warm re-run two of its five full collections.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType


class _HiddenFromOneThread(importlib.abc.MetaPathFinder):
    """An import finder that fails imports of `packages` in the thread that made it."""

    def __init__(self, packages: frozenset[str]) -> None:
        self.packages = packages
        self.thread = threading.get_ident()

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if threading.get_ident() == self.thread and fullname.split(".")[0] in self.packages:
            raise ModuleNotFoundError(f"kafkatest hides {fullname} for this import", name=fullname)
        return None


@contextlib.contextmanager
def hidden_from_this_thread(*packages: str) -> Iterator[None]:
    """Within the block, this thread cannot import `packages` (top-level names) that
    no one has imported yet; the finder is removed on leaving, whatever happens."""
    hidden = frozenset(name for name in packages if name not in sys.modules)
    if not hidden:
        yield
        return
    finder = _HiddenFromOneThread(hidden)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """Within the block, the cyclic garbage collector runs only when asked to (if it ran
    at all before); it is back on after, whatever happens.

    Loading PySpark's Connect client (pandas, pyarrow, grpc) nearly triples the objects
    the collector tracks, about 80,000 of 130,000 in a warm re-run. CPython runs a full
    collection whenever the long-lived objects have grown by a quarter since the last
    one, so that growth cost a full collection half-way through the load and another one
    later in the run (as the hypothesis plugin loads hypothesis for its terminal
    summary), 60-110 ms each. Objects made by a load are not garbage: with the collector
    paused, its young generations take them in after the load, and a warm re-run has
    three full collections instead of five (0.4 s of collection instead of 0.5 s).
    """
    import gc

    if not gc.isenabled():  # the caller's choice: left as it is
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def import_spark_connect_client() -> None:
    """Load PySpark's Connect client without IPython (see the module's docstring), and
    without the collector's passes over the objects the load makes (`collection_paused`).

    Without IPython, PySpark's progress bar, when SPARK_CONNECT_PROGRESS_BAR_ENABLED=1
    turns it on, is 80 columns wide instead of the terminal's width; that is the only
    use the client makes of IPython as it loads."""
    if "pyspark.sql.connect.session" in sys.modules:
        return
    with collection_paused(), hidden_from_this_thread("IPython"):
        import pyspark.sql.connect.session  # noqa: F401


def import_schema_registry_client() -> None:
    """Import confluent-kafka's Schema Registry client without authlib's warning.

    The client imports authlib, whose httpx integration warns on import that it is
    deprecated, and authlib first sets its warnings to "always", so no filter of the
    user's can hide it: a test that decodes a framed value would print a warning the
    user did not cause. Imported here first, under a recording context that is undone
    afterwards (authlib's "always" with it); later imports find the module loaded.
    """
    if "confluent_kafka.schema_registry" in sys.modules:
        return
    import warnings

    with warnings.catch_warnings(record=True):
        import confluent_kafka.schema_registry  # noqa: F401


def imported_on_use(package: str, names: dict[str, tuple[str, ...]]) -> Callable[[str], object]:
    """The `__getattr__` of a package face (`kafkatest.emulator`) that imports each of
    its names (`names`: defining module -> names; a name may be that module's
    submodule) from where it is defined when first asked for, and keeps it there.

    The face then costs nothing to import: code that needs one constant of it does not
    load the whole emulator (0.4 s), nor does a module inside it (each runs the face's
    `__init__` first) load its siblings."""
    where = {name: module for module, defined in names.items() for name in defined}

    def attribute(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        defining = importlib.import_module(module)
        value = getattr(defining, name, None)
        if value is None:  # a submodule
            value = importlib.import_module(f"{module}.{name}")
        setattr(sys.modules[package], name, value)
        return value

    return attribute


def moved_to(new: str) -> Callable[[str], object]:
    """The `__getattr__` of a module's old path after it moved to `new`: each name still
    works, with a DeprecationWarning naming the new path, until the alias goes."""

    def attribute(name: str) -> object:
        if name.startswith("__"):  # the import system's own questions (__path__ ...)
            raise AttributeError(name)
        value = getattr(importlib.import_module(new), name)
        warnings.warn(f"{name} moved: import it from {new}", DeprecationWarning, stacklevel=2)
        return value

    return attribute
