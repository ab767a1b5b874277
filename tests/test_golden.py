"""Behaviour unchanged, bit for bit: the seeded outputs of every learner and mechanism (actions, releases,
native ``run`` results, state bytes and pickles after a few rounds) equal the ones recorded in
``tests/data/golden.json`` by ``tests/golden/record.py``.

A refactoring must keep this test green. A change that is meant to change outputs (a new noise stream, a new
state format: then ``STATE_VERSION`` changes too) regenerates the file with ``python tests/golden/record.py`` and
says so in its commit.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

import dponline

HERE = Path(__file__).resolve().parent
GOLDEN = json.loads((HERE / "data" / "golden.json").read_text())


def _recorder():
    spec = importlib.util.spec_from_file_location("golden_record", HERE / "golden" / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


RECORD = _recorder()
CASES = dict([*RECORD.learner_cases(), *RECORD.mechanism_cases()])


def test_every_recorded_case_is_still_run():
    assert set(CASES) == set(GOLDEN["cases"])
    assert GOLDEN["state_version"] == dponline._core.STATE_VERSION


@pytest.mark.parametrize("name", sorted(GOLDEN["cases"]))
def test_outputs_are_bit_identical(name):
    assert RECORD.outputs(CASES[name]) == GOLDEN["cases"][name]
