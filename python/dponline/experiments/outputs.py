"""Output folders a job can trust: one writer at a time, and outputs replaced all at once or not at all.

* :func:`exclusive_output` — checks that ``--out`` can be written *before* any computing, and holds a lock
  (``OUT/.lock``, an advisory ``flock`` — the lock the ``filelock`` package takes, so the two exclude each other)
  so a second job on the same folder refuses with a clear message instead of silently overwriting the first one's
  files. The lock file is removed when the job ends (success, error or Ctrl-C), safely: see :class:`FolderLock`.
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

__all__ = ["OutputBusyError", "FolderLock", "exclusive_output", "publish", "check_output", "sigint_deferred"]

MANIFEST = ".outputs.json"
"""The list of files the last :func:`publish` wrote (so the next one removes those it does not replace)."""
LOCK = ".lock"
"""The lock file inside an output folder."""

_HELD: set[Path] = set()


class OutputBusyError(InvalidInputError):
    """Another job holds the output folder's lock."""


class FolderLock:
    """An exclusive, non-blocking lock on ``path`` whose file is removed on release without a race.

    POSIX: ``flock(LOCK_EX | LOCK_NB)`` on ``path`` (created if missing). Removing a lock file naively breaks mutual
    exclusion: a process that opened the old file before it was removed can lock that orphaned inode while a third
    one creates and locks a new file under the same name. So the holder unlinks the file *while still holding
    it*, and an acquirer checks after ``flock`` that ``path`` still names the inode it locked, else retries on the
    new file. Elsewhere (Windows) ``filelock.FileLock``, which removes its file on release itself.

    Raises (``acquire``):
        OutputBusyError: another process holds the lock (``message`` names the folder).
        OSError: the file cannot be created or locked.
    """

    _RETRIES = 100

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._fallback: object | None = None

    def acquire(self, busy: str) -> None:
        if os.name != "posix":
            from filelock import FileLock, Timeout

            lock = FileLock(self.path)
            try:
                lock.acquire(timeout=0)
            except Timeout:
                raise OutputBusyError(busy) from None
            self._fallback = lock
            return
        import fcntl

        for _ in range(self._RETRIES):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise OutputBusyError(busy) from None
            except BaseException:
                os.close(fd)
                raise
            try:
                current = os.stat(self.path)
            except FileNotFoundError:
                current = None
            held = os.fstat(fd)
            if current is not None and (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino):
                self._fd = fd
                return
            os.close(fd)  # we locked a file its holder removed on release: lock the current one instead
        raise OSError(f"could not lock {self.path}: it was replaced {self._RETRIES} times in a row")

    def release(self) -> None:
        """Remove the lock file, then unlock (in that order: see the class docstring). Idempotent."""
        if self._fallback is not None:
            self._fallback.release()  # type: ignore[attr-defined]
            self._fallback = None
            with contextlib.suppress(OSError):
                self.path.unlink()
            return
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self._fd)  # closing the last descriptor releases the flock
        self._fd = None


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
    """Hold ``out`` for this job: :func:`check_output`, create it, take its lock (:class:`FolderLock`), remove the
    temporary folders an interrupted :func:`publish` left beside it. Reentrant within one process. On exit
    (success, error or Ctrl-C) the lock is released and its file removed, and a folder this call created is
    removed again if nothing was written to it.

    Raises:
        InvalidInputError: see :func:`check_output`.
        OutputBusyError: another process holds the folder (a second sweep on the same ``--out``).
    """
    path = check_output(out)
    if path in _HELD:
        yield path
        return
    created = not path.exists()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInputError(f"--out {out}: cannot create the folder ({exc.strerror or exc})") from None
    lock = FolderLock(path / LOCK)
    try:
        with sigint_deferred():  # never leave a locked descriptor without its owner
            lock.acquire(
                f"--out {out}: another dponline job is writing to this folder (it holds {path / LOCK}); wait for "
                "it to finish or choose another --out"
            )
    except OutputBusyError:
        if created:
            with contextlib.suppress(OSError):
                path.rmdir()
        raise
    except OSError as exc:
        raise InvalidInputError(f"--out {out}: cannot lock the folder ({exc.strerror or exc})") from None
    _HELD.add(path)
    try:
        for stale in path.parent.glob(f".{path.name}.staging-*"):
            shutil.rmtree(stale, ignore_errors=True)  # we hold the lock: nobody else is publishing
        yield path
    finally:
        _HELD.discard(path)
        with sigint_deferred():
            lock.release()
        if created:
            with contextlib.suppress(OSError):
                path.rmdir()  # only if empty: nothing was written, leave no folder behind


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
