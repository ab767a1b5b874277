"""Optional dependencies: the core install (``pip install dponline``) needs NumPy and SciPy only; the experiments
harness, the ``dponline`` command's jobs, plots and progress bars need the ``experiments`` extra, a Dask cluster
the ``dask`` extra. A missing one raises :class:`MissingExtraError` naming the extra that installs it."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

__all__ = ["EXTRA_OF", "MissingExtraError", "require", "require_installed"]

#: The extra that installs each optional top-level module.
EXTRA_OF = {
    "pandas": "experiments",
    "pyarrow": "experiments",
    "matplotlib": "experiments",
    "tqdm": "experiments",
    "filelock": "experiments",
    "dask": "dask",
    "distributed": "dask",
}


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message names the extra to install."""


def _missing(top: str, feature: str) -> MissingExtraError:
    extra = EXTRA_OF[top]
    return MissingExtraError(
        f"{feature} needs {top}, which the core install leaves out: install the {extra!r} extra, "
        f"pip install 'dponline[{extra}]' (or 'dponline[all]')",
        name=top,
    )


def require(module: str, feature: str) -> ModuleType:
    """Import ``module`` (a dotted name whose top-level package is a key of :data:`EXTRA_OF`).

    Args:
        module: the module to import, e.g. ``"tqdm.auto"``.
        feature: what needs it, for the message (e.g. ``"progress=True"``).

    Returns:
        The imported module.

    Raises:
        MissingExtraError: the module's package is not installed; the message names the extra.
    """
    top = module.partition(".")[0]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.partition(".")[0] != top:
            raise  # the package is installed but one of its own dependencies is missing: say that instead
        raise _missing(top, feature) from exc


def require_installed(modules: tuple[str, ...], feature: str) -> None:
    """Check that every top-level package of ``modules`` is installed, without importing it.

    Raises:
        MissingExtraError: the first one that is not; the message names the extra.
    """
    for top in modules:
        if importlib.util.find_spec(top) is None:
            raise _missing(top, feature)
