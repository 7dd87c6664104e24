"""The float64 reference ops against small hand-computed values, so the reference itself can fail."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.reference import ops

NINE = np.arange(1, 10, dtype=np.float64).reshape(1, 1, 3, 3)  # [[1,2,3],[4,5,6],[7,8,9]]
# Filter layouts as the spec defines them, from OIHW.
FROM_OIHW = {"oihw": (0, 1, 2, 3), "hwio": (2, 3, 1, 0), "ohwi": (0, 2, 3, 1), "ihwo": (1, 2, 3, 0)}


def _nhwc(x):
    return np.transpose(x, (0, 2, 3, 1))


# ------------------------------------------------------------------------ conv2d

def test_conv2d_valid_non_symmetric_filter():
    w = np.array([[[[1, 2], [3, 4]]]], dtype=np.float64)
    # out[0,0] = 1*1 + 2*2 + 4*3 + 5*4 = 37, and so on.
    np.testing.assert_array_equal(ops.conv2d(NINE, w)[0, 0], [[37, 47], [67, 77]])


def test_conv2d_padding():
    out = ops.conv2d(NINE, np.ones((1, 1, 2, 2)), {"padding": [1, 1, 1, 1]})
    np.testing.assert_array_equal(out[0, 0], [[1, 3, 5, 3], [5, 12, 16, 9], [11, 24, 28, 15], [7, 15, 17, 9]])


def test_conv2d_asymmetric_padding_and_strides():
    out = ops.conv2d(NINE, np.ones((1, 1, 2, 2)), {"padding": [0, 1, 0, 1], "strides": [2, 2]})
    np.testing.assert_array_equal(out[0, 0], [[12, 9], [15, 9]])
    # Only the end of the height is padded: rows {0,1} and {2,pad}.
    out = ops.conv2d(NINE, np.ones((1, 1, 2, 1)), {"padding": [0, 1, 0, 0], "strides": [2, 1]})
    np.testing.assert_array_equal(out[0, 0], [[5, 7, 9], [7, 8, 9]])


def test_conv2d_dilations():
    out = ops.conv2d(NINE, np.ones((1, 1, 2, 2)), {"dilations": [2, 2]})
    np.testing.assert_array_equal(out, [[[[1 + 3 + 7 + 9]]]])


def test_conv2d_groups_and_bias():
    x = np.array([2.0, 3.0]).reshape(1, 2, 1, 1)
    w = np.array([1.0, 10.0, 100.0, 1000.0]).reshape(4, 1, 1, 1)
    out = ops.conv2d(x, w, {"groups": 2, "bias": np.array([1.0, 2.0, 3.0, 4.0])})
    np.testing.assert_array_equal(out.reshape(-1), [3, 22, 303, 3004])


def test_conv2d_depthwise_3x3():
    x = np.stack([NINE[0, 0], -NINE[0, 0]])[None]
    w = np.ones((2, 1, 3, 3))
    w[1, 0, 1, 1] = 2.0
    out = ops.conv2d(x, w, {"groups": 2, "padding": [1, 1, 1, 1]})
    np.testing.assert_array_equal(out[0, 0], [[12, 21, 16], [27, 45, 33], [24, 39, 28]])
    np.testing.assert_array_equal(out[0, 1], -(out[0, 0] + NINE[0, 0]))


@pytest.mark.parametrize("filter_layout", list(FROM_OIHW))
@pytest.mark.parametrize("input_layout", ["nchw", "nhwc"])
def test_conv2d_layouts(input_layout, filter_layout):
    # x channels: [[1,2],[3,4]] and [[5,6],[7,8]]; output channels 10*c0 + 100*c1 and c0 - c1.
    x = np.arange(1, 9, dtype=np.float64).reshape(1, 2, 2, 2)
    w = np.array([[10.0, 100.0], [1.0, -1.0]]).reshape(2, 2, 1, 1)
    expected = np.array([[[510, 620], [730, 840]], [[-4, -4], [-4, -4]]])[None]
    if input_layout == "nhwc":
        x, expected = _nhwc(x), _nhwc(expected)
    out = ops.conv2d(x, np.transpose(w, FROM_OIHW[filter_layout]),
                     {"inputLayout": input_layout, "filterLayout": filter_layout})
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("filter_layout", list(FROM_OIHW))
def test_conv2d_filter_layouts_spatial(filter_layout):
    w = np.array([[[[1, 2], [3, 4]]]], dtype=np.float64)
    out = ops.conv2d(_nhwc(NINE), np.transpose(w, FROM_OIHW[filter_layout]),
                     {"inputLayout": "nhwc", "filterLayout": filter_layout})
    np.testing.assert_array_equal(out[0, :, :, 0], [[37, 47], [67, 77]])


@pytest.mark.parametrize("options", [{"groups": 2}, {"bias": np.ones(2)}, {"padding": [1, 1]}])
def test_conv2d_refuses_inconsistent_options(options):
    with pytest.raises(ValueError):
        ops.conv2d(NINE, np.ones((1, 1, 2, 2)), options)


# ------------------------------------------------------------------------ pooling

def test_global_pools():
    x = np.array([[1.0, 2.0], [3.0, 4.0]]).reshape(1, 1, 2, 2)
    assert ops.averagePool2d(x).item() == 2.5
    assert ops.maxPool2d(x).item() == 4.0
    assert ops.l2Pool2d(x).item() == pytest.approx(math.sqrt(30))


def test_max_pool_window_and_strides():
    np.testing.assert_array_equal(ops.maxPool2d(NINE, {"windowDimensions": [2, 2]})[0, 0], [[5, 6], [8, 9]])
    np.testing.assert_array_equal(ops.maxPool2d(NINE, {"windowDimensions": [2, 2], "strides": [2, 2]}), [[[[5]]]])


def test_average_pool_excludes_padding():
    out = ops.averagePool2d(NINE, {"windowDimensions": [3, 3], "padding": [1, 1, 1, 1]})
    # corner (0,0): mean(1,2,4,5) = 3; edge (0,1): mean(1..6) = 3.5; centre: 5
    np.testing.assert_allclose(out[0, 0], [[3, 3.5, 4], [4.5, 5, 5.5], [6, 6.5, 7]])


def test_pool_output_shape_rounding_and_output_sizes():
    options = {"windowDimensions": [2, 2], "strides": [2, 2]}
    assert ops.maxPool2d(NINE, {**options, "outputShapeRounding": "floor"}).shape == (1, 1, 1, 1)
    np.testing.assert_array_equal(ops.maxPool2d(NINE, {**options, "outputShapeRounding": "ceil"})[0, 0],
                                  [[5, 6], [8, 9]])
    # partial windows average only the elements inside the input
    np.testing.assert_array_equal(ops.averagePool2d(NINE, {**options, "outputShapeRounding": "ceil"})[0, 0],
                                  [[3, 4.5], [7.5, 9]])
    np.testing.assert_array_equal(ops.averagePool2d(NINE, {**options, "outputSizes": [2, 2]})[0, 0],
                                  [[3, 4.5], [7.5, 9]])
    np.testing.assert_array_equal(ops.averagePool2d(NINE, {**options, "outputSizes": [1, 1]}), [[[[3]]]])
    with pytest.raises(ValueError):
        ops.averagePool2d(NINE, {**options, "outputSizes": [3, 3]})


def test_pool_dilations():
    options = {"windowDimensions": [2, 2], "dilations": [2, 2]}
    assert ops.maxPool2d(-NINE, options).item() == -1
    assert ops.averagePool2d(NINE, options).item() == 5  # mean(1, 3, 7, 9)


def test_pool_nhwc_layout():
    x = np.stack([NINE[0, 0], 10 * NINE[0, 0]])[None]  # [1, 2, 3, 3]
    out = ops.maxPool2d(_nhwc(x), {"windowDimensions": [2, 2], "layout": "nhwc"})
    assert out.shape == (1, 2, 2, 2)
    np.testing.assert_array_equal(out[0, :, :, 0], [[5, 6], [8, 9]])
    np.testing.assert_array_equal(out[0, :, :, 1], [[50, 60], [80, 90]])
    np.testing.assert_array_equal(ops.averagePool2d(_nhwc(x), {"layout": "nhwc"}).reshape(-1), [5, 50])


# ------------------------------------------------------------------ element-wise

def test_binary_broadcasting():
    a, b = np.array([[1.0], [2.0]]), np.array([10.0, 20.0, 30.0])
    np.testing.assert_array_equal(ops.add(a, b), [[11, 21, 31], [12, 22, 32]])
    np.testing.assert_array_equal(ops.sub(a, b), [[-9, -19, -29], [-8, -18, -28]])
    np.testing.assert_array_equal(ops.mul(a, b), [[10, 20, 30], [20, 40, 60]])
    np.testing.assert_array_equal(ops.div(b, a), [[10, 20, 30], [5, 10, 15]])
    np.testing.assert_array_equal(ops.max(np.array([1.0, 5.0]), np.array([[3.0], [0.0]])), [[3, 5], [1, 5]])
    np.testing.assert_array_equal(ops.min(np.array([1.0, 5.0]), np.array([[3.0], [0.0]])), [[1, 3], [0, 0]])
    np.testing.assert_array_equal(ops.pow(np.array([2.0, 4.0]), np.array([3.0, 0.5])), [8, 2])
    with pytest.raises(ValueError):
        ops.add(np.ones((2, 3)), np.ones((3, 2)))


def test_div_special_values_and_integer_truncation():
    np.testing.assert_array_equal(ops.div(np.array([1.0, -1.0]), np.array([4.0, 0.0])), [0.25, -np.inf])
    np.testing.assert_array_equal(ops.div(np.array([-7, 7], dtype=np.int32), np.array([2, -2], dtype=np.int32)),
                                  [-3, -3])
    assert np.isnan(ops.pow(np.array([-8.0]), np.array([1 / 3]))).all()


def test_clamp():
    x = np.array([-1.0, 0.5, 7.0])
    np.testing.assert_array_equal(ops.clamp(x, {"minValue": 0, "maxValue": 6}), [0, 0.5, 6])
    np.testing.assert_array_equal(ops.clamp(x, {"minValue": 0}), [0, 0.5, 7])
    np.testing.assert_array_equal(ops.clamp(x), x)
    # the bound is cast to the operand's data type first
    assert ops.clamp(np.array([1.0]), {"maxValue": 0.1})[0] == float(np.float32(0.1))
    with pytest.raises(ValueError):
        ops.clamp(x, {"minValue": 2, "maxValue": 1})


def test_activations():
    np.testing.assert_array_equal(ops.relu(np.array([-1.0, 0.0, 2.0])), [0, 0, 2])
    np.testing.assert_allclose(ops.sigmoid(np.array([0.0, math.log(3)])), [0.5, 0.75], rtol=1e-15)
    np.testing.assert_allclose(ops.tanh(np.array([math.log(2)])), [0.6], rtol=1e-15)
    assert ops.sigmoid(np.array([-1000.0]))[0] == 0.0


# ----------------------------------------------------------------- data movement

def test_reshape():
    np.testing.assert_array_equal(ops.reshape(np.arange(6), [2, 3]), [[0, 1, 2], [3, 4, 5]])
    assert ops.reshape(np.array([[5.0]]), []).shape == ()
    for bad in ([4, 2], [-1, 3], [0, 6]):
        with pytest.raises(ValueError):
            ops.reshape(np.arange(6), bad)


def test_transpose():
    x = np.arange(24).reshape(2, 3, 4)
    y = ops.transpose(x)
    assert y.shape == (4, 3, 2) and y[3, 2, 1] == x[1, 2, 3] == 23
    z = ops.transpose(x, {"permutation": [1, 0, 2]})
    assert z.shape == (3, 2, 4) and z[2, 1, 3] == x[1, 2, 3]
    with pytest.raises(ValueError):
        ops.transpose(x, {"permutation": [0, 0, 1]})


def test_concat():
    out = ops.concat([np.array([[1, 2]]), np.array([[3], ]), np.array([[4, 5, 6]])], 1)
    np.testing.assert_array_equal(out, [[1, 2, 3, 4, 5, 6]])
    np.testing.assert_array_equal(ops.concat([np.ones((1, 2)), np.zeros((2, 2))], 0), [[1, 1], [0, 0], [0, 0]])
    with pytest.raises(ValueError):
        ops.concat([np.ones((1, 2)), np.ones((2, 3))], 1)


# ------------------------------------------------------------ products, softmax

A = np.array([[1.0, 2.0], [3.0, 4.0]])
B = np.array([[5.0, 6.0], [7.0, 8.0]])


def test_gemm():
    np.testing.assert_array_equal(ops.gemm(A, B), [[19, 22], [43, 50]])
    np.testing.assert_array_equal(ops.gemm(A, B, {"aTranspose": True}), [[26, 30], [38, 44]])
    np.testing.assert_array_equal(ops.gemm(A, B, {"bTranspose": True}), [[17, 23], [39, 53]])
    np.testing.assert_array_equal(ops.gemm(A, B, {"c": np.array([1.0, 2.0]), "alpha": 2, "beta": 0.5}),
                                  [[38.5, 45], [86.5, 101]])
    np.testing.assert_array_equal(ops.gemm(A, B, {"c": np.array(1.0)}), [[20, 23], [44, 51]])
    assert ops.gemm(np.ones((1, 1)), np.ones((1, 1)), {"alpha": 0.1})[0, 0] == float(np.float32(0.1))
    with pytest.raises(ValueError):
        ops.gemm(A, B, {"c": np.ones((3, 1))})
    with pytest.raises(ValueError):
        ops.gemm(np.ones((2, 3)), np.ones((2, 3)))


def test_matmul():
    np.testing.assert_array_equal(ops.matmul(A, B), [[19, 22], [43, 50]])
    batched = ops.matmul(np.stack([A, 2 * A]), B)
    np.testing.assert_array_equal(batched, [[[19, 22], [43, 50]], [[38, 44], [86, 100]]])
    assert ops.matmul(np.ones((2, 1, 1, 2)), np.ones((3, 2, 1))).shape == (2, 3, 1, 1)
    with pytest.raises(ValueError):
        ops.matmul(np.ones(2), np.ones((2, 1)))  # the spec requires rank >= 2
    with pytest.raises(ValueError):
        ops.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 1)))  # batch dims 2 vs 3


def test_softmax():
    np.testing.assert_allclose(ops.softmax(np.array([[0.0, math.log(3)]]), 1), [[0.25, 0.75]], rtol=1e-15)
    np.testing.assert_allclose(ops.softmax(np.array([[0.0], [math.log(3)]]), 0), [[0.25], [0.75]], rtol=1e-15)
    np.testing.assert_array_equal(ops.softmax(np.array([[1000.0, 1000.0]]), 1), [[0.5, 0.5]])
    with pytest.raises(ValueError):
        ops.softmax(np.ones((1, 2)), 2)
