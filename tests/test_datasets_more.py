"""Tests for the data sets of issues 7, 9 and 10: Trump approval, Phishing, Shuttle, the Open Bandit
sample, and the derived expert losses and click probabilities.

Spot values were read by hand from the upstream files (river 0.26.1, obp 0.4.1) and are hard-coded.
"""

from __future__ import annotations

import ast
import csv
import datetime
import gzip
import hashlib
import io
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_datasets import _import_datasets, _recorded_sha256

datasets = _import_datasets()
DATASETS_DIR = Path(datasets.__file__).resolve().parent
DATA_DIR = DATASETS_DIR / "data"

NEW_FILES = (
    "trump_approval.csv.gz",
    "phishing.csv.gz",
    "shuttle.csv.gz",
    "obd_random_all.csv.gz",
    "obd_random_all_item_context.csv.gz",
)
MODULES = ("_common.py", "trump_approval.py", "classification.py", "open_bandit.py", "nyse.py", "__init__.py")
POOLED_CTR = 38 / 10000


def _sha256(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


def _csv_rows(filename: str) -> list[list[str]]:
    """Independent parse of a shipped file with the csv module."""
    return list(csv.reader(io.StringIO(gzip.decompress((DATA_DIR / filename).read_bytes()).decode("ascii"))))


def _assert_read_only(array: np.ndarray) -> None:
    assert not array.flags.writeable
    with pytest.raises(ValueError):
        array.flat[0] = array.flat[0]
    with pytest.raises(ValueError):
        array.flags.writeable = True


def _logit(p):
    return np.log(p) - np.log1p(-p)


def _check_classification_shapes(data, n_samples: int, n_positive: int) -> None:
    """What the two binary classification sets (Phishing, Shuttle) share: ``n_samples`` rows of 9 float64
    features, float64 labels in {-1, +1} of which ``n_positive`` are +1."""
    assert isinstance(data, datasets.ClassificationData)
    assert data.features.shape == (n_samples, 9) and data.features.dtype == np.float64
    assert data.labels.shape == (n_samples,) and data.labels.dtype == np.float64
    assert data.n_samples == n_samples and data.n_features == 9
    assert set(np.unique(data.labels)) == {-1.0, 1.0}
    assert int(np.sum(data.labels == 1.0)) == n_positive


def _check_labels_against_csv(data, filename: str) -> list[list[str]]:
    """``data.labels`` against an independent parse of the shipped file (header, then one row per sample, the
    label last: "1" is +1, anything else -1); returns the parsed rows."""
    rows = _csv_rows(filename)
    assert len(rows) == data.n_samples + 1
    np.testing.assert_array_equal(data.labels, [1.0 if row[-1] == "1" else -1.0 for row in rows[1:]])
    return rows


# --------------------------------------------------------------------------------------------------- files


def test_public_api():
    # An independent oracle on purpose: the public names are pinned here, so that adding or dropping one from
    # ``dponline.datasets.__all__`` is a visible, reviewed change rather than following the package's own list.
    assert set(datasets.__all__) == {
        "DEFAULT_MAX_ERROR",
        "DEFAULT_PRIOR_STRENGTH",
        "EMPIRICAL_SHUTTLE_SCALE",
        "PHISHING_FEATURE_SCALE",
        "ClassificationData",
        "NYSEData",
        "OpenBanditData",
        "TrumpApprovalData",
        "load_nyse",
        "load_open_bandit",
        "load_phishing",
        "load_shuttle",
        "load_trump_approval",
        "nyse_expert_losses",
        "open_bandit_click_probabilities",
        "open_bandit_item_blocks",
        "open_bandit_round_probabilities",
        "trump_approval_expert_losses",
    }
    for name in datasets.__all__:
        assert getattr(datasets, name) is not None


@pytest.mark.parametrize("filename", NEW_FILES)
def test_shipped_file_checksum_and_size(filename):
    blob = (DATA_DIR / filename).read_bytes()
    assert len(blob) < 400 * 1024
    assert _sha256(blob) == _recorded_sha256(f"stored `data/{filename}`")


@pytest.mark.parametrize(
    ("filename", "upstream_gz", "upstream_csv"),
    [
        (
            "trump_approval.csv.gz",
            "b3a42edc7ab0414527d3d15acbf4a5dbd1b76b43d715b74572da4bfda928eac1",
            "aef188d04b606270e9590013282e2ede3f5f92edae1106d85d3defa483189cb0",
        ),
        (
            "phishing.csv.gz",
            "d8a6d44bd9672e852b8a53ad2c64229f81972158a77d981073a98b17c27af7a9",
            "cfe77f0b77dd706ac5491842d7ad787c80b5805eb315a47a4b89d0172c760fca",
        ),
        (
            "shuttle.csv.gz",
            "1ed4bfa77233d95bff2c8ab2482725d2d800410daedf5919ad80ec6faf60ff59",
            "8bee3239f80b6549cbf0bc69c07bdcad8bb33fb968329c0678328a8ca971784b",
        ),
    ],
)
def test_river_files_are_byte_exact_copies(filename, upstream_gz, upstream_csv):
    blob = (DATA_DIR / filename).read_bytes()
    assert _sha256(blob) == upstream_gz == _recorded_sha256(f"upstream `river/datasets/{filename}`")
    assert _sha256(gzip.decompress(blob)) == upstream_csv == _recorded_sha256(f"gunzip of `river/datasets/{filename}`")


def test_open_bandit_files_checksums():
    items = gzip.decompress((DATA_DIR / "obd_random_all_item_context.csv.gz").read_bytes())
    # item_context.csv is shipped unchanged: gunzip gives back the upstream file.
    assert _sha256(items) == "eba04cc23d5f130a93ff174c5392986882b94c3839433cb8143870eaa6221358"
    assert _sha256(items) == _recorded_sha256("upstream `obp/dataset/obd/random/all/item_context.csv`")
    rounds = gzip.decompress((DATA_DIR / "obd_random_all.csv.gz").read_bytes())
    assert _sha256(rounds) == _recorded_sha256("the compact CSV (gunzip of the stored")
    # The upstream all.csv is not shipped (5 MB); its digest is recorded for whoever rebuilds the compact copy.
    assert _recorded_sha256("upstream `obp/dataset/obd/random/all/all.csv`") == (
        "7168295b6e0a9eabcf3392320a5dd434e542b68e705d5cd9491499af589812f1"
    )


def test_dataset_modules_do_not_import_core():
    """No module of dponline.datasets imports the compiled extension (or anything outside the package but
    numpy and the standard library)."""
    for name in MODULES:
        tree = ast.parse((DATASETS_DIR / name).read_text(encoding="utf-8"))
        imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
        imported += [
            "." * node.level + (node.module or "") for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
        ]
        assert imported, name
        for module in imported:
            assert "_core" not in module and not module.startswith("dponline"), (name, module)
            assert module.startswith(".") or module.split(".")[0] in sys.stdlib_module_names | {"numpy"}, module


def test_importable_without_core_extension():
    """Every loader works in a fresh interpreter where dponline._core cannot be imported."""
    script = f"""
import importlib, importlib.abc, sys, types

class _BlockCore(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "dponline._core":
            raise ModuleNotFoundError("blocked for the test", name=name)
        return None

sys.meta_path.insert(0, _BlockCore())
stub = types.ModuleType("dponline")
stub.__path__ = [{str(DATASETS_DIR.parent)!r}]
sys.modules["dponline"] = stub
import dponline.datasets as d
assert d.load_nyse().relatives.shape == (5651, 36)
assert d.nyse_expert_losses().shape == (5651, 36)
assert d.trump_approval_expert_losses().shape == (1001, 5)
assert d.load_phishing().features.shape == (1250, 9)
assert d.load_shuttle().features.shape == (49097, 9)
assert d.open_bandit_round_probabilities().shape == (10000, 80)
assert len(d.open_bandit_item_blocks()) == 12
assert "dponline._core" not in sys.modules
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


# ------------------------------------------------------------------------------------------ Trump approval


@pytest.fixture(scope="module")
def trump():
    return datasets.load_trump_approval()


def test_trump_shapes_dtypes_and_ranges(trump):
    assert isinstance(trump, datasets.TrumpApprovalData)
    assert trump.polls.shape == (1001, 5) and trump.polls.dtype == np.float64
    assert trump.average.shape == (1001,) and trump.average.dtype == np.float64
    assert trump.days.shape == (1001,) and trump.days.dtype == np.dtype("datetime64[D]")
    assert trump.n_days == 1001 and trump.n_pollsters == 5
    assert trump.pollsters == ("gallup", "ipsos", "morning_consult", "rasmussen", "you_gov")
    assert np.all(np.isfinite(trump.polls)) and np.all(np.isfinite(trump.average))
    assert 32.0 < trump.polls.min() < 32.2 and 50.3 < trump.polls.max() < 50.4
    assert 36.4 < trump.average.min() < 36.5 and 44.7 < trump.average.max() < 44.8
    # 1,001 consecutive days from 2017-03-01.
    assert np.all(np.diff(trump.days) == np.timedelta64(1, "D"))
    assert str(trump.days[0]) == "2017-03-01" and str(trump.days[-1]) == "2019-11-26"
    for needle in ("river 0.26.1", "BSD-3-Clause", "FiveThirtyEight"):
        assert needle in trump.description


def test_trump_spot_values(trump):
    # First and last data rows of the upstream file, read by hand:
    # 736389,43.75505,43.843213,46.19925042857143,48.318749,44.104692,43.636914000000004
    # 737389,41.740203,43.843213,40.570679,37.818749,40.104692,41.636914000000004
    assert datetime.date.fromordinal(736389).isoformat() == str(trump.days[0])
    assert trump.average[0] == 43.75505
    assert list(trump.polls[0]) == [43.843213, 46.19925042857143, 48.318749, 44.104692, 43.636914000000004]
    assert trump.average[-1] == 41.740203
    assert list(trump.polls[-1]) == [43.843213, 40.570679, 37.818749, 40.104692, 41.636914000000004]


def test_trump_matches_independent_parse(trump):
    rows = _csv_rows("trump_approval.csv.gz")
    assert rows[0] == [
        "ordinal_date",
        "five_thirty_eight",
        "gallup",
        "ipsos",
        "morning_consult",
        "rasmussen",
        "you_gov",
    ]
    table = np.array([[float(x) for x in row] for row in rows[1:]])
    np.testing.assert_array_equal(trump.average, table[:, 1])
    np.testing.assert_array_equal(trump.polls, table[:, 2:])
    assert [datetime.date.fromordinal(int(o)).isoformat() for o in table[:, 0]] == [str(d) for d in trump.days]


def test_trump_expert_losses(trump):
    losses = datasets.trump_approval_expert_losses()
    assert datasets.DEFAULT_MAX_ERROR == 10.0
    assert losses.shape == (1001, 5) and losses.dtype == np.float64
    assert np.all(losses >= 0.0) and np.all(losses <= 1.0)
    np.testing.assert_array_equal(losses, ((trump.polls - trump.average[:, None]) / 10.0) ** 2)
    # Largest error 8.185129 points (nothing clipped at 10), by hand from the upstream file.
    assert losses.max() == pytest.approx((8.185129 / 10.0) ** 2, abs=1e-12)
    assert losses[0, 0] == pytest.approx(((43.843213 - 43.75505) / 10.0) ** 2, rel=1e-12)
    assert datasets.trump_approval_expert_losses(10) is losses  # cached
    _assert_read_only(losses)


def test_trump_expert_losses_clip_at_the_declared_bound(trump):
    losses = datasets.trump_approval_expert_losses(max_error=2.0)
    error = np.abs(trump.polls - trump.average[:, None])
    assert np.all(losses <= 1.0) and np.all(losses >= 0.0)
    assert np.any(error > 2.0)
    np.testing.assert_array_equal(losses[error >= 2.0], 1.0)
    np.testing.assert_allclose(losses[error < 2.0], (error[error < 2.0] / 2.0) ** 2, rtol=1e-12, atol=0)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_trump_expert_losses_bad_bound(bad):
    with pytest.raises(ValueError, match="max_error"):
        datasets.trump_approval_expert_losses(bad)


def test_trump_expert_losses_non_numeric_bound():
    with pytest.raises(TypeError, match="max_error"):
        datasets.trump_approval_expert_losses("10")  # type: ignore[arg-type]


def test_trump_cached_and_read_only(trump):
    assert datasets.load_trump_approval() is trump
    for array in (trump.polls, trump.average, trump.days):
        _assert_read_only(array)
    with pytest.raises(AttributeError):
        trump.polls = np.zeros((1001, 5))  # frozen dataclass


# ---------------------------------------------------------------------------------------------- NYSE experts


def test_nyse_expert_losses():
    losses = datasets.nyse_expert_losses()
    r = datasets.load_nyse().relatives
    assert losses.shape == (5651, 36) and losses.dtype == np.float64
    assert np.all(losses >= 0.0) and np.all(losses < 1.0)
    np.testing.assert_array_equal(losses.min(axis=1), 0.0)  # the day's best stock
    np.testing.assert_array_equal(losses, 1.0 - r / r.max(axis=1, keepdims=True))
    # Day 0, by hand: relatives 1.01515 (column A) and the day's best relative.
    assert losses[0, 0] == pytest.approx(1.0 - 1.01515 / r[0].max(), abs=1e-15)
    assert datasets.nyse_expert_losses() is losses
    _assert_read_only(losses)


# ------------------------------------------------------------------------------------------------- Phishing


@pytest.fixture(scope="module")
def phishing():
    return datasets.load_phishing()


def test_phishing_shapes_and_values(phishing):
    _check_classification_shapes(phishing, 1250, 548)
    assert set(np.unique(phishing.features)) == {0.0, 0.5, 1.0}
    assert set(np.unique(phishing.features[:, 7:])) == {0.0, 1.0}  # age_of_domain, ip_in_url are binary
    np.testing.assert_array_equal(phishing.features, phishing.raw_features)
    np.testing.assert_array_equal(phishing.feature_scale, np.ones(9))
    assert phishing.empirical_feature_scale is None
    np.testing.assert_array_equal(phishing.scale, np.ones(9))
    assert phishing.feature_names[0] == "empty_server_form_handler" and phishing.feature_names[-1] == "ip_in_url"
    assert "phishing" in phishing.positive_class
    assert "river 0.26.1" in phishing.description and "BSD-3-Clause" in phishing.description


def test_phishing_spot_values(phishing):
    # Upstream rows 1 and 2, read by hand: 0.0,0.0,0.0,0.0,0.0,0.5,1.0,1,1,1 and 1.0,0.0,0.5,0.5,0.0,0.5,0.0,1,0,1
    assert list(phishing.features[0]) == [0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 1.0, 1.0]
    assert list(phishing.features[1]) == [1.0, 0.0, 0.5, 0.5, 0.0, 0.5, 0.0, 1.0, 0.0]
    assert phishing.labels[0] == 1.0 and phishing.labels[1] == 1.0
    rows = _check_labels_against_csv(phishing, "phishing.csv.gz")
    np.testing.assert_array_equal(phishing.raw_features, [[float(x) for x in row[:-1]] for row in rows[1:]])


# -------------------------------------------------------------------------------------------------- Shuttle


@pytest.fixture(scope="module")
def shuttle():
    return datasets.load_shuttle()


def test_shuttle_shapes_and_values(shuttle):
    _check_classification_shapes(shuttle, 49097, 3511)  # 3511 anomalies, as river documents
    assert np.all(np.abs(shuttle.features) <= 1.0)
    assert shuttle.feature_names == tuple(f"f{i}" for i in range(1, 10))
    assert shuttle.feature_scale is None
    # The empirical scale is exactly each column's largest |value| (so every column reaches +-1).
    scale = np.asarray(datasets.EMPIRICAL_SHUTTLE_SCALE)
    np.testing.assert_array_equal(shuttle.empirical_feature_scale, scale)
    np.testing.assert_array_equal(np.abs(shuttle.raw_features).max(axis=0), scale)
    np.testing.assert_array_equal(np.abs(shuttle.features).max(axis=0), 1.0)
    np.testing.assert_array_equal(shuttle.features, shuttle.raw_features / scale)
    assert np.all(shuttle.raw_features == np.round(shuttle.raw_features))  # integer readings
    assert "anomaly" in shuttle.positive_class


def test_shuttle_spot_values(shuttle):
    # Upstream rows 1 and 2, read by hand: 50,21,77,0,28,0,27,48,22,1 and 53,0,82,0,52,-5,29,30,2,0
    assert list(shuttle.raw_features[0]) == [50, 21, 77, 0, 28, 0, 27, 48, 22]
    assert list(shuttle.raw_features[1]) == [53, 0, 82, 0, 52, -5, 29, 30, 2]
    assert shuttle.labels[0] == 1.0 and shuttle.labels[1] == -1.0
    assert shuttle.features[1, 5] == -5.0 / 26739.0
    _check_labels_against_csv(shuttle, "shuttle.csv.gz")


def test_classification_cached_and_read_only(phishing, shuttle):
    assert datasets.load_phishing() is phishing and datasets.load_shuttle() is shuttle
    for data in (phishing, shuttle):
        for array in (data.features, data.labels, data.raw_features, data.scale):
            _assert_read_only(array)


# ------------------------------------------------------------------------------------------------ Open Bandit


@pytest.fixture(scope="module")
def obd():
    return datasets.load_open_bandit()


def test_open_bandit_shapes_and_values(obd):
    assert isinstance(obd, datasets.OpenBanditData)
    assert obd.n_rounds == 10000 and obd.n_items == 80 and obd.n_positions == 3
    for array in (obd.item_id, obd.position, obd.click):
        assert array.shape == (10000,) and array.dtype == np.int64
    assert obd.user_features.shape == (10000, 4) and obd.user_features.dtype == np.int64
    assert obd.item_feature_0.shape == (80,) and obd.item_feature_0.dtype == np.float64
    assert obd.item_categories.shape == (80, 3) and obd.item_categories.dtype == np.int64
    assert set(np.unique(obd.item_id)) == set(range(80))
    assert set(np.unique(obd.position)) == {0, 1, 2}
    assert set(np.unique(obd.click)) == {0, 1} and int(obd.click.sum()) == 38
    assert list(obd.user_features.max(axis=0) + 1) == [3, 5, 8, 8]
    assert list(obd.item_categories.max(axis=0) + 1) == [12, 21, 7]
    assert len(np.unique(obd.item_feature_0)) == 41
    shows = np.bincount(obd.item_id)
    assert shows.min() == 96 and shows.max() == 160
    for needle in ("obp 0.4.1", "Apache-2.0", "Saito"):
        assert needle in obd.description


def test_open_bandit_spot_values(obd):
    # all.csv, read by hand: row 0 is item 14 at position 3, not clicked; the first click is row 586,
    # item 38 at position 1; item 49 was shown 114 times and clicked 3 times (the most of any item).
    assert (obd.item_id[0], obd.position[0], obd.click[0]) == (14, 2, 0)
    assert int(np.flatnonzero(obd.click)[0]) == 586
    assert (obd.item_id[586], obd.position[586]) == (38, 0)
    assert int(np.sum(obd.item_id == 49)) == 114 and int(obd.click[obd.item_id == 49].sum()) == 3
    # item_context.csv, read by hand: item 0's item_feature_0 is -0.49917162609493676.
    assert obd.item_feature_0[0] == -0.49917162609493676
    assert obd.item_feature_0[1] == -0.5437753679553131
    # User feature 0 has levels of 8200, 79 and 1721 rounds (codes in order of first appearance).
    assert list(np.bincount(obd.user_features[:, 0])) == [8200, 79, 1721]


def test_open_bandit_matches_independent_parse(obd):
    rows = _csv_rows("obd_random_all.csv.gz")
    assert rows[0] == ["item_id", "position", "click"] + [f"user_feature_{k}" for k in range(4)]
    table = np.array([[int(x) for x in row] for row in rows[1:]])
    np.testing.assert_array_equal(obd.item_id, table[:, 0])
    np.testing.assert_array_equal(obd.position, table[:, 1] - 1)
    np.testing.assert_array_equal(obd.click, table[:, 2])
    np.testing.assert_array_equal(obd.user_features, table[:, 3:])
    items = _csv_rows("obd_random_all_item_context.csv.gz")
    np.testing.assert_array_equal(obd.item_feature_0, [float(row[2]) for row in items[1:]])


def test_open_bandit_cached_and_read_only(obd):
    assert datasets.load_open_bandit() is obd
    for array in (obd.item_id, obd.position, obd.click, obd.user_features, obd.item_feature_0, obd.item_categories):
        _assert_read_only(array)


def test_click_probabilities(obd):
    p = datasets.open_bandit_click_probabilities()
    assert datasets.DEFAULT_PRIOR_STRENGTH == 100.0
    assert p.shape == (80,) and p.dtype == np.float64
    assert np.all(p > 0.0) and np.all(p < 1.0)
    # Item 49, by hand: (3 + 100 * 0.0038) / (114 + 100).
    assert p[49] == pytest.approx(3.38 / 214.0, rel=1e-14)
    assert int(np.argmax(p)) == 49
    # Never-clicked items share the formula 0.38 / (n_a + 100).
    shows = np.bincount(obd.item_id, minlength=80)
    clicks = np.bincount(obd.item_id, weights=obd.click, minlength=80)
    np.testing.assert_allclose(p, (clicks + 100.0 * POOLED_CTR) / (shows + 100.0), rtol=1e-14, atol=0)
    # Each smoothed rate lies between the item's raw rate and the pooled rate.
    raw = clicks / shows
    assert np.all(p >= np.minimum(raw, POOLED_CTR) - 1e-15) and np.all(p <= np.maximum(raw, POOLED_CTR) + 1e-15)
    assert datasets.open_bandit_click_probabilities(100) is p
    _assert_read_only(p)


def test_click_probabilities_prior_strength():
    weak = datasets.open_bandit_click_probabilities(1.0)
    strong = datasets.open_bandit_click_probabilities(1e6)
    default = datasets.open_bandit_click_probabilities()
    spread = [np.max(np.abs(q - POOLED_CTR)) for q in (weak, default, strong)]
    assert spread[0] > spread[1] > spread[2] and spread[2] < 1e-5
    assert np.all(weak > 0.0) and np.all(weak < 1.0)


@pytest.mark.parametrize("bad", [0.0, -5.0, math.nan, math.inf])
def test_prior_strength_bad_values(bad):
    with pytest.raises(ValueError, match="prior_strength"):
        datasets.open_bandit_click_probabilities(bad)
    with pytest.raises(ValueError, match="prior_strength"):
        datasets.open_bandit_round_probabilities(bad)


def test_round_probabilities(obd):
    probs = datasets.open_bandit_round_probabilities()
    p = datasets.open_bandit_click_probabilities()
    assert probs.shape == (10000, 80) and probs.dtype == np.float64 and probs.flags.c_contiguous
    assert np.all(probs > 0.0) and np.all(probs < 1.0)
    assert 1e-4 < probs.min() < 2e-4 and 0.03 < probs.max() < 0.04
    # The user context shifts every item's log-odds by the same amount in a round.
    shift = _logit(probs) - _logit(p)[None, :]
    np.testing.assert_allclose(shift, shift[:, :1] * np.ones((1, 80)), rtol=0, atol=1e-9)
    # One row per user context: 240 distinct contexts, and rows equal exactly when contexts are equal.
    contexts, inverse = np.unique(obd.user_features, axis=0, return_inverse=True)
    assert len(contexts) == 240 == len(np.unique(probs, axis=0))
    inverse = inverse.reshape(-1)
    first = np.zeros(len(contexts), dtype=np.int64)
    first[inverse[::-1]] = np.arange(10000)[::-1]
    np.testing.assert_array_equal(probs, probs[first[inverse]])
    assert datasets.open_bandit_round_probabilities(100.0) is probs
    _assert_read_only(probs)


def test_round_probabilities_hand_computed_round():
    """Round 0's log-odds shift, from counts read by hand from the logged rounds."""
    probs = datasets.open_bandit_round_probabilities()
    p = datasets.open_bandit_click_probabilities()
    mu, m = POOLED_CTR, 100.0
    # Round 0's user features have codes (0, 0, 0, 0); rounds and clicks of these levels by hand:
    # feature 0: 8200 rounds, 31 clicks; feature 1: 8308, 33; feature 2: 2319, 9; feature 3: 1123, 2.
    shift = sum(
        math.log((c + m * mu) / (n - c + m * (1 - mu))) - math.log(mu / (1 - mu))
        for n, c in ((8200, 31), (8308, 33), (2319, 9), (1123, 2))
    )
    expected = 1.0 / (1.0 + np.exp(-(_logit(p) + shift)))
    np.testing.assert_allclose(probs[0], expected, rtol=1e-12, atol=0)
    assert shift == pytest.approx(-0.005 + 0.044 + 0.020 - 0.671, abs=2e-3)


def test_round_probabilities_deterministic_and_consistent():
    module = sys.modules[datasets.open_bandit_round_probabilities.__module__]
    fresh = module._round_probabilities.__wrapped__(100.0)
    np.testing.assert_array_equal(fresh, datasets.open_bandit_round_probabilities())
    # The coverage value of a 3-item display is a probability, and adding items never lowers it.
    probs = datasets.open_bandit_round_probabilities()
    f1 = probs[:, 49]
    f3 = 1.0 - (1.0 - probs[:, 49]) * (1.0 - probs[:, 53]) * (1.0 - probs[:, 6])
    assert np.all(f3 >= f1) and np.all(f3 < 1.0)


@pytest.mark.parametrize(
    ("feature", "sizes"), [(1, [14, 13, 10, 10, 6, 5, 5, 5, 4, 4, 3, 1]), (3, [27, 19, 17, 7, 7, 2, 1])]
)
def test_item_blocks(feature, sizes, obd):
    blocks = datasets.open_bandit_item_blocks(feature)
    assert isinstance(blocks, tuple) and all(isinstance(b, tuple) for b in blocks)
    assert sorted(len(b) for b in blocks)[::-1] == sizes
    flat = [a for b in blocks for a in b]
    assert sorted(flat) == list(range(80))  # disjoint and covering
    assert all(list(b) == sorted(b) for b in blocks)
    assert [b[0] for b in blocks] == sorted(b[0] for b in blocks)  # ordered by smallest item id
    assert all(isinstance(a, int) for a in flat)
    codes = obd.item_categories[:, feature - 1]
    for b in blocks:
        assert len(set(codes[list(b)])) == 1


def test_item_blocks_hand_checked():
    # item_context.csv, read by hand: the item_feature_1 value of item 0 (aed79091...) is shared by 14 items.
    blocks = datasets.open_bandit_item_blocks()
    assert blocks[0] == (0, 6, 9, 11, 16, 17, 20, 21, 30, 31, 40, 43, 49, 61)
    assert len(blocks) == 12 and blocks[1][0] == 1
    assert len(datasets.open_bandit_item_blocks(2)) == 21


@pytest.mark.parametrize("bad", [0, 4, -1, True, "1"])
def test_item_blocks_bad_feature(bad):
    with pytest.raises(ValueError, match="feature"):
        datasets.open_bandit_item_blocks(bad)


def test_item_blocks_build_a_partition_matroid():
    domains = pytest.importorskip("dponline.domains", exc_type=ImportError)
    blocks = datasets.open_bandit_item_blocks()
    matroid = domains.PartitionMatroid(blocks, [1] * len(blocks), base=False)
    assert matroid.dim == 80


@pytest.mark.parametrize(
    ("filename", "needle"),
    [
        ("LICENSE.river-0.26.1.txt", "BSD 3-Clause License"),
        ("LICENSE.obp-0.4.1.txt", "Apache License"),
    ],
)
def test_upstream_licences_are_shipped(filename, needle):
    blob = (DATA_DIR / filename).read_bytes()
    assert _sha256(blob) == _recorded_sha256(f"stored `data/{filename}`")
    assert needle in blob.decode("utf-8")
