"""Type aliases of the bounds (annotations only): numpy arrays by element type.

``FloatArray`` is ``numpy.typing.NDArray[np.float64]``; an elementwise kernel that takes one
float or an array of them is annotated ``Real``; inputs converted with ``np.asarray`` are
``numpy.typing.ArrayLike``.
"""
from __future__ import annotations

from typing import TypeAlias, Union

import numpy as np
from numpy.typing import NDArray

__all__ = ["FloatArray", "IntArray", "BoolArray", "Real", "ExactInts", "Signs", "FourInts"]

FloatArray: TypeAlias = NDArray[np.float64]
IntArray: TypeAlias = NDArray[np.int64]
BoolArray: TypeAlias = NDArray[np.bool_]
#: one float or an array of them (elementwise kernels that never call ``np.asarray`` on it)
Real: TypeAlias = Union[float, FloatArray]
#: exact integers: int64 where products cannot overflow, else an object array of Python ints
ExactInts: TypeAlias = Union[NDArray[np.int64], NDArray[np.object_]]
#: certified increment signs of the exact binomial engine: ``(up_u, down_u, up_l, down_l)``
Signs: TypeAlias = tuple[BoolArray, BoolArray, BoolArray, BoolArray]
#: four parallel int arrays: branch-and-bound segments ``(row, a, b, kind)``, or runs of increments
FourInts: TypeAlias = tuple[IntArray, IntArray, IntArray, IntArray]
