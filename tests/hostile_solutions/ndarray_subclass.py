"""Hostile: An ndarray subclass (or, without numpy, a list subclass) with a rigged __eq__ and __array__."""
try:
    import numpy as np

    class Rigged(np.ndarray):
        def __eq__(self, other):
            return np.ones((), dtype=bool)

    def fake():
        return np.zeros(4).view(Rigged)
except ImportError:
    class Rigged(list):
        def __eq__(self, other):
            return True

    def fake():
        return Rigged([0.0] * 4)


def split_heads(x, h):
    return fake()


def merge_heads(x):
    return fake()


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    return fake()


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    return fake()


def multi_head_forward(query, key, value, weights, h, mask=None):
    return fake()


def parameter_count(d_model, h, bias=True):
    return fake()


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    return fake()
