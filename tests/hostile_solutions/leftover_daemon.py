"""Hostile: Leave processes behind: a double-forked, setsid daemon and a detached sleep, started at import."""
import os
import subprocess

subprocess.Popen(["sleep", "7777"], start_new_session=True, stdin=subprocess.DEVNULL,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        import time
        try:
            import ctypes
            ctypes.CDLL(None).prctl(15, b"grader-hostile", 0, 0, 0)  # PR_SET_NAME
        except Exception:
            pass
        os.execvp("sleep", ["sleep", "7777"])
    os._exit(0)


def split_heads(x, h):
    raise NotImplementedError


def merge_heads(x):
    raise NotImplementedError


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    raise NotImplementedError


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    raise NotImplementedError


def multi_head_forward(query, key, value, weights, h, mask=None):
    raise NotImplementedError


def parameter_count(d_model, h, bias=True):
    raise NotImplementedError


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    raise NotImplementedError
