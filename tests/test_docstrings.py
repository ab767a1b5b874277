"""The examples in public docstrings run and print what they claim."""

import doctest

import pytest

import dponline.aggregation
import dponline.learners.private_bandit
import dponline.learners.private_submodular
import dponline.submodular


@pytest.mark.parametrize(
    "module",
    [
        dponline.aggregation,
        dponline.learners.private_bandit,
        dponline.learners.private_submodular,
        dponline.submodular,
    ],
)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
