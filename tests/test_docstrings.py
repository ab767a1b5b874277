"""The examples in public docstrings run and print what they claim."""

import doctest

import pytest

import dponline.aggregation
import dponline.audit
import dponline.domains
import dponline.experiments
import dponline.learners.dp_ftrl
import dponline.learners.private_bandit
import dponline.learners.private_exp3
import dponline.learners.private_scrible
import dponline.learners.private_submodular
import dponline.local_dp.learners
import dponline.local_dp.potential
import dponline.local_dp.randomizer
import dponline.submodular


@pytest.mark.parametrize(
    "module",
    [
        dponline.aggregation,
        dponline.audit,
        dponline.domains,
        dponline.learners.private_bandit,
        dponline.learners.dp_ftrl,
        dponline.learners.private_exp3,
        dponline.learners.private_scrible,
        dponline.experiments,
        dponline.local_dp.randomizer,
        dponline.local_dp.potential,
        dponline.local_dp.learners,
        dponline.learners.private_submodular,
        dponline.submodular,
    ],
)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
