"""Hostile: Try to become root, chroot out, mount, unshare and use ptrace; report what worked."""
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
WORKED = []
for name, attempt in [("setuid", lambda: os.setuid(0)), ("chroot", lambda: os.chroot("/tmp")),
                      ("unshare", lambda: libc.unshare(0x10000000) == 0 or (_ for _ in ()).throw(OSError())),
                      ("mount", lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0
                       or (_ for _ in ()).throw(OSError())),
                      ("ptrace", lambda: libc.ptrace(16, 1, 0, 0) == 0 or (_ for _ in ()).throw(OSError()))]:
    try:
        attempt()
        WORKED.append(name)
    except (OSError, Exception):
        pass


def split_heads(x, h):
    raise PermissionError('escaped: ' + ','.join(WORKED))


def merge_heads(x):
    raise PermissionError('escaped: ' + ','.join(WORKED))


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    raise PermissionError('escaped: ' + ','.join(WORKED))


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    raise PermissionError('escaped: ' + ','.join(WORKED))


def multi_head_forward(query, key, value, weights, h, mask=None):
    raise PermissionError('escaped: ' + ','.join(WORKED))


def parameter_count(d_model, h, bias=True):
    raise PermissionError('escaped: ' + ','.join(WORKED))


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    raise PermissionError('escaped: ' + ','.join(WORKED))
