"""The examples and the ``dponline`` command run end to end (small sizes)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dponline.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "script,args",
    [
        ("tree_aggregation.py", ["--days", "500"]),
        ("portfolio.py", ["--horizon", "20000"]),
        ("display_slots.py", ["--horizon", "20000"]),
    ],
)
def test_example_runs(script, args):
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *args], capture_output=True, text=True, check=True
    )
    assert "DP" in out.stdout


def test_portfolio_job_writes_its_outputs(tmp_path, capsys):
    assert main(["portfolio", "--horizon", "3000", "--seeds", "2", "--out", str(tmp_path), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "BCRP" in printed and "UCRP" in printed and "regret" in printed
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["horizon"] == 3000 and results["privacy"]["epsilon"] == 1.0
    assert {row["learner"] for row in results["summary"]} == {"private", "non-private"}
    assert len(results["runs"]["private"]) == 2
    lines = (tmp_path / "regret.csv").read_text().splitlines()
    assert lines[0].startswith("t,private_mean") and len(lines) > 100
    assert (tmp_path / "regret.png").stat().st_size > 10_000


def test_portfolio_job_bootstraps_long_horizons(tmp_path):
    assert (
        main(["portfolio", "--horizon", "20000", "--seeds", "1", "--delta", "0", "--out", str(tmp_path), "--quiet"])
        == 0
    )
    results = json.loads((tmp_path / "results.json").read_text())
    assert "bootstrapped" in results["stream"] and results["privacy"]["delta"] == 0.0
    assert "Lemma 5.1" in results["privacy"]["source"]
