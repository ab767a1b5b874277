"""Tests for dponline.datasets: the bundled NYSE(O) data set (the others: test_datasets_more.py)."""

from __future__ import annotations

import csv
import gzip
import hashlib
import importlib
import importlib.util
import io
import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

_REPO_PKG_DIR = Path(__file__).resolve().parents[1] / "python" / "dponline"


def _package_dir() -> Path:
    spec = importlib.util.find_spec("dponline")  # locates the package without running its __init__
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return _REPO_PKG_DIR


def _import_without_package_init() -> types.ModuleType:
    """Import dponline.datasets under a bare stand-in for the ``dponline`` package.

    Used only when ``dponline/__init__.py`` cannot be imported (e.g. ``dponline._core`` is not
    built yet); ``dponline.datasets`` itself must not need the extension.
    """

    def owned(name: str) -> bool:
        return name == "dponline" or name.startswith("dponline.")

    saved = {name: mod for name, mod in sys.modules.items() if owned(name)}
    for name in saved:
        del sys.modules[name]
    stub = types.ModuleType("dponline")
    stub.__path__ = [str(_package_dir())]
    sys.modules["dponline"] = stub
    try:
        module = importlib.import_module("dponline.datasets")
        # Fill every cache while the package is resolvable.
        for loader in (module.load_nyse, module.nyse_expert_losses, module.load_trump_approval):
            loader()
        for loader in (module.trump_approval_expert_losses, module.load_phishing, module.load_shuttle):
            loader()
        module.open_bandit_round_probabilities()
    finally:
        for name in [name for name in sys.modules if owned(name)]:
            del sys.modules[name]
        sys.modules.update(saved)
    return module


def _import_datasets() -> types.ModuleType:
    try:
        import dponline  # noqa: F401
    except ImportError:
        return _import_without_package_init()
    from dponline import datasets

    return datasets


datasets = _import_datasets()
DATASETS_DIR = Path(datasets.__file__).resolve().parent
DATA_FILE = DATASETS_DIR / "data" / "nyse_o.csv.gz"
PROVENANCE = DATASETS_DIR / "PROVENANCE.md"

N_DAYS, N_ASSETS = 5651, 36
TICKERS = tuple("ABCDEFGHIJKLMNOP") + ("x7",) + tuple("RSTUVWXYZ") + tuple(f"x{i}" for i in range(1, 7))
TICKERS += ("a", "b", "c", "d")

# Computed once from the upstream universal/data/nyse_o.csv (see PROVENANCE.md).
BEST_STOCK, BEST_STOCK_WEALTH = "x4", 54.14036436157841
UCRP_WEALTH = 27.075246344648352
UBAH_WEALTH = 14.497308277140409


def _recorded_sha256(row_marker: str) -> str:
    """The SHA-256 recorded in PROVENANCE.md on the checksum-table row containing row_marker."""
    for line in PROVENANCE.read_text(encoding="utf-8").splitlines():
        if line.startswith("|") and row_marker in line:
            match = re.search(r"`([0-9a-f]{64})`", line)
            assert match is not None, line
            return match.group(1)
    raise AssertionError(f"no checksum row with {row_marker!r} in {PROVENANCE}")


def _stored_prices() -> tuple[list[str], np.ndarray]:
    """Independent parse of the stored file with the csv module and Python's float()."""
    text = gzip.decompress(DATA_FILE.read_bytes()).decode("ascii")
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], np.array([[float(x) for x in row] for row in rows[1:]], dtype=np.float64)


@pytest.fixture(scope="module")
def data():
    return datasets.load_nyse()


@pytest.fixture(scope="module")
def prices():
    return _stored_prices()[1]


def test_public_api():
    assert {"load_nyse", "NYSEData", "nyse_expert_losses"} <= set(datasets.__all__)
    assert isinstance(datasets.load_nyse(), datasets.NYSEData)


def test_shape_dtype_and_values(data):
    r = data.relatives
    assert isinstance(r, np.ndarray)
    assert r.shape == (N_DAYS, N_ASSETS)
    assert r.dtype == np.float64
    assert data.n_days == N_DAYS and data.n_assets == N_ASSETS
    assert np.all(np.isfinite(r))
    assert np.all(r > 0.0)
    assert 0.74 < r.min() < 0.76 and 1.35 < r.max() < 1.36


def test_relatives_are_read_only_and_cached(data):
    r = data.relatives
    assert not r.flags.writeable
    with pytest.raises(ValueError):
        r[0, 0] = 2.0
    with pytest.raises(ValueError):
        r.flags.writeable = True
    assert datasets.load_nyse() is data
    with pytest.raises(AttributeError):
        data.relatives = np.ones((N_DAYS, N_ASSETS))  # frozen dataclass


def test_tickers(data):
    assert isinstance(data.tickers, tuple)
    assert len(data.tickers) == N_ASSETS == len(set(data.tickers))
    assert all(isinstance(t, str) and t for t in data.tickers)
    assert data.tickers == TICKERS


def test_description(data):
    text = data.description
    assert isinstance(text, str) and text
    for needle in ("universal-portfolios 0.4.17", "Cover", "Borodin", "FMIT"):
        assert needle in text


def test_stored_file_checksums_match_provenance():
    blob = DATA_FILE.read_bytes()
    assert len(blob) < 2 * 1024 * 1024
    assert hashlib.sha256(blob).hexdigest() == _recorded_sha256("stored `data/nyse_o.csv.gz`")
    # The stored file decompresses to the upstream CSV byte for byte.
    upstream = _recorded_sha256("upstream `universal/data/nyse_o.csv`")
    assert upstream == "b2f26e2ce08d12871b631f02c0990637ab7bde02c2a90f4f804b0dd24cb6820d"
    assert hashlib.sha256(gzip.decompress(blob)).hexdigest() == upstream


def test_stored_prices_shape_and_header(prices):
    header, _ = _stored_prices()
    assert tuple(header) == TICKERS
    assert prices.shape == (N_DAYS, N_ASSETS)
    assert np.all(np.isfinite(prices)) and np.all(prices > 0.0)


def test_relatives_recomputed_bit_exactly(data, prices):
    expected = np.empty_like(prices)
    expected[0] = prices[0]  # prices are normalised to 1 just before the first day
    expected[1:] = prices[1:] / prices[:-1]
    np.testing.assert_array_equal(data.relatives, expected)
    digest = hashlib.sha256(np.ascontiguousarray(data.relatives, dtype="<f8").tobytes()).hexdigest()
    assert digest == _recorded_sha256("`load_nyse().relatives`")


def test_known_values(data, prices):
    r = data.relatives
    # The first stored row is the first day's relatives, exactly as written in the CSV.
    np.testing.assert_array_equal(r[0, :4], [1.01515, 1.02765, 1.04183, 1.02083])
    np.testing.assert_array_equal(r[1], prices[1] / prices[0])
    np.testing.assert_allclose(r[1, :4], [1.01493, 1.04036, 0.98905, 0.99490], rtol=0, atol=1e-12)
    # The data set is published with 5 decimals; the recomputed relatives sit within rounding of that.
    assert np.max(np.abs(r - np.round(r, 5))) < 1e-12
    # The most extreme day: column W (a volatile low-priced stock) on day 1117.
    assert np.unravel_index(np.argmax(r), r.shape) == (1117, TICKERS.index("W"))


def test_products_match_normalised_prices(data, prices):
    r = data.relatives
    np.testing.assert_allclose(np.prod(r, axis=0), prices[-1], rtol=1e-9, atol=0)
    np.testing.assert_allclose(np.prod(r[1:], axis=0), prices[-1] / prices[0], rtol=1e-9, atol=0)


def test_best_stock_wealth(data):
    wealth = np.prod(data.relatives, axis=0)
    assert data.tickers[int(np.argmax(wealth))] == BEST_STOCK
    assert wealth.max() == pytest.approx(BEST_STOCK_WEALTH, rel=1e-9)
    assert round(float(wealth.max()), 2) == 54.14  # the figure quoted in the literature


def test_uniform_portfolios_wealth(data):
    r = data.relatives
    ucrp = np.prod(np.mean(r, axis=1))
    assert ucrp == pytest.approx(UCRP_WEALTH, rel=1e-9)
    ubah = np.mean(np.prod(r, axis=0))
    assert ubah == pytest.approx(UBAH_WEALTH, rel=1e-9)
    assert round(float(ubah), 2) == 14.50  # the "market" figure quoted in the literature
