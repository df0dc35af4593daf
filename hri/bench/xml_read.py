"""Reading a large tree file (``hri bench --only xml``): hri's tinyxml2 pre-pass beside expat.

BehaviorTree.CPP reads trees with tinyxml2, which takes raw ``&&``, ``<`` and ``>`` in
attribute values; hri rewrites such values for expat first (:func:`hri.bt.xml_text.tinyxml_attributes`,
a few regular expressions over the bytes). On a tree file of about the loader's size limit
(:func:`tree_file`, every element's values needing the rewrite), the median over ``--repeat``
of: the pre-pass, expat parsing its result, and hri's whole reader
(:func:`hri.bt.xml_text.parse_xml`: pre-pass, expat, the elements with their lines). Figures,
not a pass/fail: ``tests/test_xml_text.py`` counts the pre-pass's Python work instead, which
does not depend on the machine.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from hri.bench.common import BenchSettings, Say, sig, summary

ELEMENTS = 36_000  # 72,000 nodes, 5.0 MB (4.7 MiB): about the tree loader's limit (hri.bt.xml_loader)


def tree_file(elements: int, padding: int = 0, rewrite: bool = True) -> bytes:
    """A tree of ``2 * elements`` nodes, 3 lines each pair: a Script whose ``code`` holds a raw
    ``>`` and whose ``doc`` holds ``padding`` plain bytes, and an AlwaysSuccess whose ``_skipIf``
    holds a raw ``&&``; with ``rewrite`` false the same values are written escaped (nothing to
    rewrite)."""
    code = "a := (b &lt; 3) &amp;&amp; c > {}" if rewrite else "a := (b &lt; 3) &amp;&amp; c &gt; {}"
    skip = "x && y" if rewrite else "x &amp;&amp; y"
    body = "".join(f'    <Script name="s{i}" code="{code.format(i)}" doc="{"p" * padding}"/>\n'
                   f'    <AlwaysSuccess _skipIf="{skip}"\n        _post="z := 1"/>\n' for i in range(elements))
    return (f'<root BTCPP_format="4">\n  <BehaviorTree ID="M">\n   <Sequence>\n{body}   </Sequence>\n'
            "  </BehaviorTree>\n</root>\n").encode()


def _seconds(work: Callable[[], Any]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def run(settings: BenchSettings, say: Say) -> dict[str, Any]:
    import xml.parsers.expat

    from hri.bt.xml_text import parse_xml, tinyxml_attributes

    data = tree_file(ELEMENTS)
    rewritten = tinyxml_attributes(data, "bench.xml")
    times: dict[str, list[float]] = {"pre_pass_s": [], "expat_s": [], "parse_xml_s": []}
    for k in range(settings.repeat):
        say(f"xml: {k + 1}/{settings.repeat}")
        times["pre_pass_s"].append(_seconds(lambda: tinyxml_attributes(data, "bench.xml")))
        times["expat_s"].append(_seconds(lambda: xml.parsers.expat.ParserCreate().Parse(rewritten, True)))
        times["parse_xml_s"].append(_seconds(lambda: parse_xml(data, "bench.xml")))
    ratios = [pre / expat for pre, expat in zip(times["pre_pass_s"], times["expat_s"])]
    return {"bytes": len(data), "nodes": 2 * ELEMENTS, **{name: summary(values) for name, values in times.items()},
            "pre_pass_per_expat": summary(ratios), "mb_per_s_pre_pass": sig(len(data) / 1e6 / min(times["pre_pass_s"]))}
