"""``hri convert``: write a tree file in the other format (XML -> YAML).

The YAML keeps the XML's nodes, ports, structure and its leading comments; includes of
``.xml`` files become includes of their ``.yaml`` forms.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from hri.bt.xml_loader import parse_xml
from hri.bt.yaml_format import dump_yaml
from hri.errors import HriError


def xml_to_yaml(source: Path) -> str:
    try:
        data = source.read_bytes()
    except OSError as err:
        raise HriError(f"cannot read: {err.strerror}", str(source)) from None
    head = data.decode("utf-8", errors="replace").split("<root", 1)[0]
    comments = [textwrap.dedent(" " * 5 + c.strip()).strip() for c in re.findall(r"<!--(.*?)-->", head, re.S)]
    header = f"The YAML form of {source.name} (the same tree; see docs/trees.md, \"YAML trees\")."
    if comments:
        header += "\n\n" + "\n".join(line.strip() for c in comments for line in c.splitlines())
    return dump_yaml(parse_xml(data, str(source)), header=header, include_suffix=".yaml")


def convert_file(source: Path, target: Path | None) -> Path:
    """Convert ``source`` (.xml) to YAML at ``target`` (default: beside it, .yaml)."""
    if source.suffix.lower() != ".xml":
        raise HriError("only XML trees can be converted so far (to YAML)", str(source))
    target = target or source.with_suffix(".yaml")
    text = xml_to_yaml(source)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)
    return target
