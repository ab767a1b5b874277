"""Output folders a job can trust: one writer at a time, and outputs replaced all at once or not at all.

* :func:`exclusive_output` — checks that ``--out`` can be written *before* any computing, and holds a lock
  (the ``filelock`` package, ``OUT/.lock``) so a second job on the same folder refuses with a clear message
  instead of silently overwriting the first one's files.
* :func:`publish` — writes a job's files into a temporary folder beside ``OUT``, flushes them to disk, then
  moves them into ``OUT`` with Ctrl-C held back for those few renames, and removes the files of the previous
  publication that this one does not replace. A failure or an interrupt before the renames (a full disk, an
  error while plotting, Ctrl-C) leaves the previous complete outputs untouched and no temporary files.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import InvalidInputError

__all__ = ["OutputBusyError", "exclusive_output", "publish", "check_output", "sigint_deferred"]

MANIFEST = ".outputs.json"
"""The list of files the last :func:`publish` wrote (so the next one removes those it does not replace)."""
LOCK = ".lock"
"""The lock file inside an output folder."""

_HELD: set[Path] = set()


class OutputBusyError(InvalidInputError):
    """Another job holds the output folder's lock."""


def check_output(out: str | os.PathLike[str]) -> Path:
    """``out`` as an absolute path, after checking that it is (or can become) a writable folder.

    Raises:
        InvalidInputError: ``out`` is a file, or neither it nor its nearest existing parent is a writable
            folder.
    """
    path = Path(out).expanduser().absolute()
    if path.exists() and not path.is_dir():
        raise InvalidInputError(f"--out {out}: exists and is not a folder")
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise InvalidInputError(f"--out {out}: cannot write in {existing} (permission denied)")
    return path


@contextlib.contextmanager
def exclusive_output(out: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold ``out`` for this job: :func:`check_output`, create it, take its lock, remove the temporary
    folders an interrupted :func:`publish` left beside it. Reentrant within one process. On exit the lock is
    released and a folder this call created is removed again if nothing was written to it.

    Raises:
        InvalidInputError: see :func:`check_output`.
        OutputBusyError: another process holds the folder (a second sweep on the same ``--out``).
    """
    from filelock import FileLock, Timeout

    path = check_output(out)
    if path in _HELD:
        yield path
        return
    created = not path.exists()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInputError(f"--out {out}: cannot create the folder ({exc.strerror or exc})") from None
    lock = FileLock(path / LOCK)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise OutputBusyError(
            f"--out {out}: another dponline job is writing to this folder (it holds {path / LOCK}); wait for it "
            "to finish or choose another --out"
        ) from None
    except OSError as exc:
        raise InvalidInputError(f"--out {out}: cannot lock the folder ({exc.strerror or exc})") from None
    _HELD.add(path)
    try:
        for stale in path.parent.glob(f".{path.name}.staging-*"):
            shutil.rmtree(stale, ignore_errors=True)  # we hold the lock: nobody else is publishing
        yield path
    finally:
        _HELD.discard(path)
        lock.release()
        if created:
            with contextlib.suppress(OSError):
                if os.listdir(path) == [LOCK]:  # nothing was written: leave no empty folder behind
                    (path / LOCK).unlink()
                    path.rmdir()


@contextlib.contextmanager
def sigint_deferred() -> Iterator[None]:
    """Hold Ctrl-C back for the duration of the block and deliver it right after (``KeyboardInterrupt`` at the
    block's end), so a handful of renames or the start of a worker is never cut in the middle. Python runs
    signal handlers in the main thread, so this replaces the handler (a signal mask would not do: another thread,
    a BLAS worker say, would take the signal). A no-op outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received and callable(previous):
            previous(signal.SIGINT, None)  # the default handler raises KeyboardInterrupt


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(directory: str | os.PathLike[str], write: Callable[[Path], list[Path]]) -> list[Path]:
    """Replace the outputs in ``directory`` by what ``write(staging)`` writes, all at once.

    ``write`` gets an empty temporary folder beside ``directory`` and returns the files it wrote there (flat,
    no sub-folders). They are flushed to disk, then moved into ``directory`` (created if needed) with Ctrl-C
    deferred, and the files of the previous publication that are not replaced are removed (``.outputs.json``
    lists them). Other content of ``directory`` (``cache/``, the lock, the user's own files) is kept.

    Returns:
        The published paths inside ``directory``.

    Raises:
        Whatever ``write`` raises (``OSError`` on a full disk, ``KeyboardInterrupt`` ...): ``directory`` is then
        unchanged and the temporary folder removed.
    """
    target = Path(directory).expanduser().absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{target.name}.staging-", dir=target.parent))
    try:
        files = [Path(f) for f in write(stage)]
        for f in files:
            if f.parent != stage:
                raise ValueError(f"publish: {f} is not a file of the staging folder")
            _fsync(f)
        names = [f.name for f in files]
        (stage / MANIFEST).write_text(json.dumps(names))
        _fsync(stage / MANIFEST)
        target.mkdir(parents=True, exist_ok=True)
        try:
            previous = json.loads((target / MANIFEST).read_text())
            previous = [n for n in previous if isinstance(n, str) and "/" not in n and n not in names]
        except (OSError, ValueError):
            previous = []
        with sigint_deferred():
            for f in files:
                os.replace(f, target / f.name)
            os.replace(stage / MANIFEST, target / MANIFEST)
            for name in previous:
                with contextlib.suppress(OSError):
                    (target / name).unlink()
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return [target / n for n in names]
