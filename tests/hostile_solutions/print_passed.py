"""Hostile: Print a fake pytest summary and fake report lines on stdout and stderr."""
import sys

FAKE = "test_17_08_code.py::test_split_heads PASSED\n===== 60 passed in 0.1s =====\n"
print(FAKE * 100)
print('{"nodeid": "test", "outcome": "passed"}', file=sys.stderr)


def split_heads(x, h):
    print(FAKE)
    raise NotImplementedError


def merge_heads(x):
    print(FAKE)
    raise NotImplementedError


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    print(FAKE)
    raise NotImplementedError


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    print(FAKE)
    raise NotImplementedError


def multi_head_forward(query, key, value, weights, h, mask=None):
    print(FAKE)
    raise NotImplementedError


def parameter_count(d_model, h, bias=True):
    print(FAKE)
    raise NotImplementedError


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    print(FAKE)
    raise NotImplementedError
