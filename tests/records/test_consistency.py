"""A record's history checked value by value: the quick path for plain numbers says what the
full check says."""

import math

import pytest

from lipnorm_exp.records.consistency import _value_problem, history_problem

VALUES = (
    0.0,
    0.5,
    1.0,
    1.5,
    -0.1,
    2,
    0,
    10**30,
    -3,
    True,
    False,
    None,
    "x",
    math.nan,
    math.inf,
    -math.inf,
    1e308,
    [0.1, 0.2],
    [0.1, math.nan],
    [1.5],
    [None, 2],
)


@pytest.mark.parametrize("value", VALUES, ids=repr)
@pytest.mark.parametrize("key", ["train_loss", "train_acc", "grad_attn"])
def test_history_problem_says_what_each_value_check_says(key, value):
    rows = [{"epoch": 1, "train_loss": 0.3}, {"epoch": 2, key: value}]
    assert history_problem(rows) == _value_problem(2, key, value)


def test_history_problem_by_hand():
    assert history_problem([{"epoch": 1, "val_acc": 0.8, "loss": 12.5}]) is None
    assert history_problem([{"epoch": 1, "val_acc": 2}]) == "epoch 1's val_acc is 2, not in [0, 1]"
    assert history_problem([{"epoch": 1, "loss": math.inf}]) == (
        "epoch 1's loss is inf, not finite (a record writes null)"
    )
    assert history_problem([{"epoch": 1, "loss": True}]) == "epoch 1's loss is True, not a number"
    assert history_problem([{"epoch": 2}]) == "its history's row 1 is not epoch 1"
