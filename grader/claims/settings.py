"""Strict settings (issue #27): a model setting of a measured check (``activation``, ``norm``,
``tied``, ``dtype``, ``bias``: :data:`grader.claims.checks.measured.MODEL_FIELDS`) that the
quantity measured does not take is a located load error, like a size it does not take; and the
evidence names every setting that determined the number (:func:`describe_settings`).

What each quantity takes (the rest would be ignored by the measurement):

- ``dtype``: the KV cache's bytes only (``bytes.kv_cache*``; ``attention.bytes.fp16`` names
  its dtype in the quantity);
- ``activation``: the feed-forward's (``params.block``, ``params.model``, ``flops.forward``,
  ``flops.ffn``, ``flops.decode_step``);
- ``norm``: the parameter counts (``params.block``, ``params.model``): a norm has weights but
  no matmul FLOPs;
- ``tied``: ``params.model`` (a tied output layer is counted once; its FLOPs are the same);
- ``bias``: every quantity of a layer or a model but ``params_nobias`` and the KV cache;
- all of them: the inference quantities (``bytes.decode_step*``, ``bytes.prefill*``,
  ``flops.*_layer``, ``intensity.*``: mha.inference builds the whole model in its dtype).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

SETTINGS = ("activation", "norm", "tied", "dtype", "bias")
_ACTIVATION = frozenset({"params.block", "params.model", "flops.forward", "flops.ffn", "flops.decode_step"})
_NORM = frozenset({"params.block", "params.model"})
_KV = frozenset({"bytes.kv_cache", "bytes.kv_cache_token", "bytes.kv_cache_token_layer"})
DEFAULTS: Mapping[str, Any] = {"activation": "gelu", "norm": "layernorm", "tied": True, "dtype": "fp32",
                               "bias": True}


def settings_taken(quantity: str, given: Iterable[str] = ()) -> frozenset[str]:
    """The settings the quantity's measurement depends on, with the sizes ``given``."""
    from .model_sizes import INFERENCE, is_model_quantity
    if quantity in INFERENCE:           # mha.inference builds the whole model in its dtype: all of them
        return frozenset(SETTINGS)
    model = is_model_quantity(quantity, tuple(given))
    out: set[str] = set()
    if quantity in _KV:
        return frozenset({"dtype"})
    if quantity != "params_nobias" and (model or quantity.startswith(("params", "flops.", "attention.",
                                                                     "shape.", "tensor."))):
        out.add("bias")
    if model and quantity in _ACTIVATION:
        out.add("activation")
    if model and quantity in _NORM:
        out.add("norm")
    if model and quantity == "params.model":
        out.add("tied")
    return frozenset(out)


def why_not(setting: str, quantity: str) -> str:
    if setting == "dtype":
        if quantity.startswith("attention.bytes."):
            return f"{quantity} names its dtype in the quantity ({quantity.rsplit('.', 1)[1]})"
        return "only the KV cache's bytes and the inference quantities (bytes.decode_step*, ...) depend on a dtype"
    if setting == "bias" and quantity in _KV:
        return "the KV cache holds keys and values, whatever the biases"
    if setting == "bias":
        return "params_nobias counts the weights without biases"
    if setting == "norm":
        return "only parameter counts depend on the norm (it has weights, no matmul FLOPs)"
    if setting == "tied":
        return "only params.model depends on it (a tied output layer is counted once)"
    return "the feed-forward's activation changes only params.block, params.model and the FFN's FLOPs"


def strict_settings(site: Any, params: Mapping[str, Any], quantities: Iterable[str], given: Iterable[str]) -> bool:
    """Every setting the check states is one its quantity takes (a compare's: one of its two, measured
    on the same model); else a located error."""
    given = tuple(given)
    qs = list(dict.fromkeys(quantities))
    taken = frozenset().union(*(settings_taken(q, given) for q in qs))
    ok = True
    for s in SETTINGS:
        if s in params and s not in taken:
            loc = site.mapping.key_loc(s) if hasattr(site.mapping, "key_loc") and s in site.mapping else None
            q = " and ".join(qs)
            shown = ", ".join(sorted(taken)) or "none"
            site.error(f"{site.what}: {s!r} is not a setting of {q}, which would be measured without it: "
                       f"{why_not(s, qs[0])}; {q} {'take' if len(qs) > 1 else 'takes'} {shown}", loc)
            ok = False
    return ok


def describe_settings(request: Mapping[str, Any]) -> str:
    """'fp16', 'swiglu, rmsnorm, no biases, untied': the settings that determined a measured number
    (defaults included: the evidence of a KV cache always says its dtype); '' when none."""
    q = str(request.get("quantity", ""))
    taken = settings_taken(q, tuple(dict(request.get("at") or {})))
    model = dict(request.get("model") or {})
    o = {**DEFAULTS, **model, "bias": bool(request.get("bias", True))}
    parts = []
    if "dtype" in taken:
        parts.append(str(o["dtype"]))
    if "activation" in taken:
        parts.append(str(o["activation"]))
    if "norm" in taken:
        parts.append(str(o["norm"]))
    if "bias" in taken and model:
        parts.append("biases" if o["bias"] else "no biases")
    if "tied" in taken:
        parts.append("tied" if o["tied"] else "untied")
    return ", ".join(parts)
