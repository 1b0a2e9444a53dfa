"""JUnit XML: the one writer of the grades' report (`grader grade --format junit`) and the
claims' (`grader check-spec --format junit`). A report builds :class:`Suite` and :class:`Case`
values (attributes in the order they are written, each child an element with its text);
:func:`write` makes the document: every attribute and text made XML-safe (:func:`xml_safe`),
indented, with its XML declaration."""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from xml.etree import ElementTree as ET

# the declaration as each report has always written it (grades: double quotes, claims: single)
GRADES_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>\n'
CLAIMS_DECLARATION = "<?xml version='1.0' encoding='utf-8'?>\n"

_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(value: object) -> str:
    """Text XML 1.0 can hold: characters it forbids are written as \\uXXXX."""
    return _XML_BAD.sub(lambda m: f"\\u{ord(m.group()):04x}", str(value))


@dataclass
class Child:
    """An element inside a testcase: ``failure``, ``error``, ``skipped``, ``system-out``."""
    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    text: str | None = None


@dataclass
class Case:
    """A testcase: its attributes and its children, in order."""
    attrs: dict[str, str]
    children: list[Child] = field(default_factory=list)

    def add(self, tag: str, text: str | None = None, **attrs: str) -> None:
        self.children.append(Child(tag, attrs, text))


@dataclass
class Suite:
    """A testsuite: its attributes and its testcases."""
    attrs: dict[str, str]
    cases: list[Case] = field(default_factory=list)


def write(attrs: dict[str, str], suites: Iterable[Suite], *, declaration: str = GRADES_DECLARATION) -> str:
    """The document: ``<testsuites>`` with ``attrs`` and the suites, indented, after ``declaration``."""
    root = ET.Element("testsuites", _safe(attrs))
    for s in suites:
        suite = ET.SubElement(root, "testsuite", _safe(s.attrs))
        for c in s.cases:
            case = ET.SubElement(suite, "testcase", _safe(c.attrs))
            for child in c.children:
                el = ET.SubElement(case, child.tag, _safe(child.attrs))
                if child.text is not None:
                    el.text = xml_safe(child.text)
    ET.indent(root)
    return declaration + ET.tostring(root, encoding="unicode") + "\n"


def _safe(attrs: dict[str, str]) -> dict[str, str]:
    return {k: xml_safe(v) for k, v in attrs.items()}
