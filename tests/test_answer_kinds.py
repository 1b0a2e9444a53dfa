"""The answer-kind registry (grader/answers/kinds/): each kind one module, and the loader, the
checker, the screening and the verifier read the registry instead of listing kinds."""
import importlib
import types

import pytest

from grader.answers import KINDS as ANSWER_KINDS, AnswerSpec, check_answer
from grader.answers import kinds
from grader.answers.model import Outcome
from grader.bank import KINDS as BANK_KINDS, load_bank, verify_reference
from grader.errors import ErrorList


def test_every_module_is_one_kind_with_its_parts():
    for name in kinds.MODULES:
        module = importlib.import_module(f"grader.answers.kinds.{name}")
        kind = kinds.KINDS[name]
        assert module.NAME == kind.name == name and kind.help
        assert kind.graded in ("check", "person", "tests")
        if kind.graded != "tests":          # answered as text: a checker and a reader
            assert kind.check and kind.prepare and kind.read, name
    assert set(ANSWER_KINDS) == {k for k, v in kinds.KINDS.items() if v.graded != "tests"}
    assert set(BANK_KINDS) == set(kinds.KINDS) and "code" not in ANSWER_KINDS


def _bank(tmp_path, body):
    f = tmp_path / "bank.yaml"
    f.write_text("subject: x\nproblems:\n" + body)
    return f


def test_a_field_of_another_kind_is_a_located_error(tmp_path):
    f = _bank(tmp_path, "  - id: x/a\n    prompt: p\n    kind: number\n    reference: 3\n    unit: byte\n"
                        "  - id: x/b\n    prompt: p\n    kind: shape\n    reference: [1, 2]\n    choices: {A: a}\n")
    with pytest.raises(ErrorList) as e:
        load_bank(f)
    text = str(e.value)
    assert f"{f}:7:" in text and "'unit' is a field of quantity problems, not of number problems" in text
    assert f"{f}:12:" in text and "'choices' is a field of choice problems, not of shape problems" in text


def test_the_derive_keys_are_the_kinds(tmp_path):
    f = _bank(tmp_path, "  - {id: x/a, prompt: p, kind: interval, reference: '[0, 1]', derive: {formula: d}}\n")
    with pytest.raises(ErrorList) as e:
        load_bank(f)
    text = str(e.value)
    assert "unknown key 'formula' in 'derive'" in text and "known keys: at, hi, lo" in text
    assert "an interval's 'derive' must be {lo, hi, at}" in text


def test_a_kind_added_to_the_registry_is_loaded_screened_checked_and_verified(tmp_path, monkeypatch):
    """A new kind is one module and its name in the registry: nothing else changes."""
    def check(spec, raw):
        return Outcome("correct", True, 1.0, raw, "correct") if raw == spec.reference else \
            Outcome("wrong", False, 0.0, raw, "not it")

    module = types.SimpleNamespace(
        NAME="parity", HELP="even or odd", prepare=lambda spec: spec.reference, check=check,
        read=lambda spec, text: kinds.base.Shown(text),
        verify_plain=lambda problem: (problem.reference in ("even", "odd"), "a parity", "nothing to derive"))
    monkeypatch.setitem(kinds.KINDS, "parity", kinds.kind_of(module))
    monkeypatch.setattr(kinds, "ANSWER_KINDS", kinds.ANSWER_KINDS + ("parity",))
    bank = load_bank(_bank(tmp_path, "  - {id: x/p, prompt: 'parity of 4?', kind: parity, reference: even}\n"))
    problem = bank.get("x/p")
    assert verify_reference(problem, bank).ok
    spec = AnswerSpec("parity", "even")
    assert check_answer(spec, "even").status == "correct" and check_answer(spec, "odd").status == "wrong"
    assert check_answer(spec, [1, 2]).feedback == "invalid answer: expected text or a number, not a list"
