"""The kinds of checkable statements, told apart by rules over the text (no model, no network):
worked arithmetic, definitions, formulas, shapes, counts, asymptotic costs, comparisons, model
configurations, and judgements that no computation can decide."""
from __future__ import annotations

import re
from fractions import Fraction

KINDS = ("arithmetic", "definition", "formula", "shape", "count", "asymptotic", "comparison",
         "configuration", "judgement")

_ASYMPTOTIC = re.compile(r"(?<![\w^])[OΘΩ]\(|\\mathcal\s*\{?O|\bTheta\(|\b(?:quadratic|linear|cubic)(?:ally)?\s+(?:in|with)\b")
_SHAPE = re.compile(r"∈\s*ℝ|\\in\s*\\mathbb|\bshape[sd]?\b|\(\s*[A-Za-z]\w{0,6}\s*,\s*[A-Za-z]\w{0,6}(?:\s*,\s*[A-Za-z]\w{0,6})*\s*\)"
                    r"|\b\d+\s*[×x]\s*\d+\b|(?<![\w^])[a-z](?:_[a-z])?\s*×\s*[a-z](?:_[a-z])?(?!\w)")
_COUNT = re.compile(r"\b(?:param(?:eter)?s?|FLOPs?|flops|bytes?|[KMGT]i?B|memory|multiply-adds?|weights)\b", re.I)
_COMPARISON = re.compile(r"\bdominat|\b(?:greater|larger|smaller|less|more|fewer|faster|slower|cheaper|bigger)\s+than\b"
                         r"|\bcomparable\b|\bsame\b[^.]{0,60}\bas\b|\bvs\.?(?=\s)|\s[<>≤≥]\s|\bneutral\b|\bdoes(?:n't| not) (?:add|increase)", re.I)
MODEL = re.compile(r"\b(?:GPT-?\d(?:\.\d)?(?:\s?\d+B)?|LLaMA[ -]?\d(?:\.\d)?(?:[ -]\d+B)?|Llama[ -]?\d(?:\.\d)?(?:[ -]\d+[Bb])?[\w-]*"
                   r"|BERT(?:-(?:base|large))?|RoBERTa|T5|PaLM\s?\d?|Mistral(?: \d+B)?|Mixtral|Gemma|Falcon|BLOOM|Chinchilla"
                   r"|Transformer \((?:base|big)\)|meta-llama/[\w.-]{1,60})")
_CONFIG_FIELD = re.compile(r"\"([a-z_]{2,40})\"\s*:\s*(\d[\d_]*)")
_TABLE_ROW = re.compile(r"(?:\d[\d,.]*[KMB]?\s+){2,}\d[\d,.]*[KMB]?")
_FORMULA = re.compile(r"[√Σ∑^²³ᵀ]|\\(?:frac|sqrt|sum|cdot)|softmax|\b[A-Za-z](?:_\w+)?\s*=\s*[A-Za-z(]")
_ASSIGN = re.compile(r"(?<![\w^])([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)?)\s*(=|≈)\s*(\d+(?:,\d{3})*(?:\.\d+)?(?:\s?[KMB]\b)?)(?![\d.,]*\s*[·×*/^+\-²³]\s*\d)")
_WORD_CONFIG = [(re.compile(r"(\d[\d,.]*\s?(?:billion|B)?)[\s-]+(?:parameters?|params)\b", re.I), "P"),
                (re.compile(r"(\d[\d,]*)\s+(?:different\s+)?(?:attention\s+)?heads\b", re.I), "h"),
                (re.compile(r"(\d[\d,]*)\s+(?:layers|blocks)\b", re.I), "L")]
CONFIG_KEYS = {"hidden_size": "d", "d_model": "d", "n_embd": "d", "num_attention_heads": "h", "n_head": "h",
               "num_hidden_layers": "L", "n_layer": "L", "num_key_value_heads": "n_kv", "intermediate_size": "d_ff",
               "vocab_size": "V", "n_ctx": "n_ctx", "max_position_embeddings": "n_ctx"}
QUESTION = re.compile(r".*\?\s*$", re.S)


def kinds_of(text: str, numeric_chain: bool, definitions: int, symbolic_equation: bool) -> list[str]:
    """The kinds a statement belongs to, most specific first ([] for none: a question, a fragment)."""
    out = []
    if numeric_chain:
        out.append("arithmetic")
    if definitions:
        out.append("definition")
    if config_values(text):
        out.append("configuration")
    if _SHAPE.search(text):
        out.append("shape")
    if _ASYMPTOTIC.search(text):
        out.append("asymptotic")
    if _COUNT.search(text) and re.search(r"\d|[A-Za-z]²|\^", text):
        out.append("count")
    if _COMPARISON.search(text):
        out.append("comparison")
    if symbolic_equation or _FORMULA.search(text):
        out.append("formula")
    if not out and len(text.split()) >= 3 and not QUESTION.match(text):
        out.append("judgement")
    return out


def assignments(text: str) -> list[tuple[str, str, str]]:
    """(name, relation, figure) for each "name = number" of a statement ("d_model = 512", "h=8 heads")."""
    out = []
    for m in _ASSIGN.finditer(text[:4000]):
        out.append((m.group(1), m.group(2), m.group(3)))
        if len(out) >= 24:
            break
    return out


def config_values(text: str) -> dict[str, str]:
    """{symbol: figure} a statement gives a named model (or a config.json field)."""
    out: dict[str, str] = {}
    for m in _CONFIG_FIELD.finditer(text[:4000]):
        if m.group(1) in CONFIG_KEYS:
            out[CONFIG_KEYS[m.group(1)]] = m.group(2)
    if MODEL.search(text[:4000]):
        for pattern, sym in _WORD_CONFIG:
            w = pattern.search(text[:4000])
            if w and sym not in out:
                out[sym] = w.group(1).strip()
    return out


def model_name(text: str) -> str | None:
    m = MODEL.search(text[:4000])
    return m.group(0).strip() if m else None


def is_table_row(text: str) -> bool:
    return bool(_TABLE_ROW.fullmatch(text.strip()))


def to_fraction(figure: str) -> Fraction | None:
    from grader.claims.figures import FigureError, parse_figure
    try:
        f = parse_figure(figure)
    except (FigureError, ValueError, ArithmeticError):
        return None
    return f.value if len(str(f.value.numerator)) <= 60 else None
