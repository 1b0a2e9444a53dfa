"""Hostile: Find the hidden tests and their seeds and sizes; answer from a table (there is none to find)."""
import glob
import os

PATTERNS = ("/grade/**/test_*.py", "/tmp/**/test_*.py", "/sandbox/**/test_*.py", "/*/test_17_08_hidden.py",
            "/*/*/test_17_08_hidden.py", "/usr/lib/python3*/**/test_17_08_hidden.py", "/proc/*/cwd/test_*.py",
            "/proc/*/root/grade/*.py", "/proc/*/root/tmp/**/test_*.py")
FOUND = [p for pattern in PATTERNS for p in glob.glob(pattern, recursive=True)][:5]
SOURCES = [open(p).read() for p in FOUND]


def split_heads(x, h):
    raise RuntimeError('found tests: ' + ', '.join(FOUND))


def merge_heads(x):
    raise RuntimeError('found tests: ' + ', '.join(FOUND))


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    raise RuntimeError('found tests: ' + ', '.join(FOUND))


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    raise RuntimeError('found tests: ' + ', '.join(FOUND))


def multi_head_forward(query, key, value, weights, h, mask=None):
    raise RuntimeError('found tests: ' + ', '.join(FOUND))


def parameter_count(d_model, h, bias=True):
    raise RuntimeError('found tests: ' + ', '.join(FOUND))


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    raise RuntimeError('found tests: ' + ', '.join(FOUND))
