"""``failgate check --junit FILE``: the gate as JUnit XML, the file pytest's ``--junitxml``
writes for the gate's items.

Each item of the gate's tree (``core.base.items``) is a ``testcase`` with pytest's
``classname`` and ``name`` (its node id split as pytest splits it), its outcome
(``failure``, ``skipped``, or none when it passed) and its ``properties`` (the items'
``user_properties``), so a CI tool that reads pytest's file reads this one alike. Every
text is escaped XML: a report's case ids and messages never become markup.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from ..core.base.items import gate_nodes

if TYPE_CHECKING:
    from ..core.base.items import Node
    from ..core.base.result import GateResult

SUITE = "pytest"  # pytest's default ``junit_suite_name``
# what XML 1.0 cannot hold, as pytest's ``bin_xml_escape`` writes it (#x1B)
_ILLEGAL = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: object) -> str:
    return _ILLEGAL.sub(lambda found: f"#x{ord(found.group()):02X}", str(value))


def classname(ceilings_path: str, node: Node) -> str:
    """The ``classname`` pytest writes: the file as a dotted path, then the collectors."""
    first = re.sub(r"\.py$", "", ceilings_path.replace("/", "."))
    return ".".join((first, *node.parts[:-1]))


def render_junit(result: GateResult) -> str:
    """The run's items as one JUnit ``testsuite``, in the order pytest collects them."""
    nodes = gate_nodes(result)
    failures = sum(node.outcome == "failed" for node in nodes)
    skipped = sum(node.outcome == "skipped" for node in nodes)
    suite = ET.Element("testsuite", name=SUITE, errors="0", failures=str(failures),
                       skipped=str(skipped), tests=str(len(nodes)), time="0.000")
    for node in nodes:
        case = ET.SubElement(suite, "testcase",
                             classname=_text(classname(result.ceilings_path, node)),
                             name=_text(node.name), time="0.000")
        if node.properties:
            properties = ET.SubElement(case, "properties")
            for name, value in node.properties:
                ET.SubElement(properties, "property", name=_text(name), value=_text(value))
        if node.outcome == "failed":
            first = node.message.splitlines()[0] if node.message else "failed"
            failure = ET.SubElement(case, "failure", message=_text(first))
            failure.text = _text(node.message)
        elif node.outcome == "skipped":
            ET.SubElement(case, "skipped", type="pytest.skip", message=_text(node.message))
    suites = ET.Element("testsuites", name="pytest tests")
    suites.append(suite)
    return '<?xml version="1.0" encoding="utf-8"?>' + ET.tostring(suites, encoding="unicode")
