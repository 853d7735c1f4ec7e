"""Speed of the CSV shape check every reader runs before parsing (issue 31; figures, never asserted).

Run with:  python -m pytest tests/benchmarks/test_bench_csv_shape.py --benchmark-enable
"""
from __future__ import annotations

import pytest

from meter_dashboard.core.files import check_csv_shape
from meter_dashboard.core.validation import InputError
from meter_dashboard.leaderboard.model import read_losses
from meter_dashboard.testsets.files import read_predictions

MIB = 1 << 20


def _valid_predictions(size: int) -> bytes:
    rows, n = ["id,prediction\n"], 14
    i = 0
    while n < size - 32:
        line = f"ex{i:08d},cat\n"
        rows.append(line)
        n += len(line)
        i += 1
    return "".join(rows).encode()


def test_shape_check_of_a_valid_10_mib_predictions_file(benchmark):
    data = _valid_predictions(10 * MIB)
    benchmark(check_csv_shape, data)


def test_shape_check_of_a_10_mib_loss_file_of_short_rows(benchmark):
    data = ("a,b\n" + "0,1\n" * (10 * MIB // 4 - 1)).encode()
    benchmark(check_csv_shape, data)


@pytest.mark.parametrize("read", [read_predictions, read_losses], ids=["predictions", "losses"])
def test_refusing_a_wide_header(benchmark, read):
    header = "id,prediction" if read is read_predictions else "a,b"
    data = (header + "," * 12_000 + "\n" + "x1,y\n" * 2000).encode()

    def refuse():
        with pytest.raises(InputError):
            read(data)

    benchmark(refuse)


def test_refusing_a_1_mib_row(benchmark):
    data = b"id,prediction\na,b\n" + b"0," * (MIB // 2) + b"\n"

    def refuse():
        with pytest.raises(InputError):
            read_predictions(data)

    benchmark(refuse)
