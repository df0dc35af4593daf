"""Property tests of the scenario loader: any file gives a Scenario or an HriError, nothing else.

Two kinds of input: YAML-like text of any shape, and the coexistence preset with one value
somewhere replaced (or removed) by something of any type. Either loads (then it is a
Scenario) or fails with :class:`hri.base.errors.HriError`, one line with a place; never another
exception (a traceback for the user).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hri.base.errors import HriError
from hri.scenario.load import Scenario, load_scenario, preset_path

PRESET = yaml.safe_load(preset_path("coexistence").read_text())
PRESET["trees"] = {role: str((preset_path("coexistence").parent / name).resolve())
                   for role, name in PRESET["trees"].items()}

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                      max_leaves=12)


def _paths(node, prefix=()):
    """Every key path of a nested mapping/list."""
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


PATHS = [path for path in _paths(PRESET) if path]


def _load(tmp_path: Path, text: str) -> None:
    path = tmp_path / "fuzzed.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        scenario = load_scenario(str(path), check_trees=False)
    except HriError as error:
        assert str(error).strip() and "\n" not in str(error)
        return
    assert isinstance(scenario, Scenario)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(index=st.integers(0, len(PATHS) - 1), value=values, remove=st.booleans())
def test_a_preset_with_any_one_value_changed_loads_or_is_an_hri_error(tmp_path, index, value, remove):
    data = copy.deepcopy(PRESET)
    *parents, last = PATHS[index]
    node = data
    for key in parents:
        node = node[key]
    if remove:
        del node[last]
    else:
        node[last] = value
    try:
        text = yaml.safe_dump(data, allow_unicode=True)
    except yaml.YAMLError:
        return
    _load(tmp_path, text)


yamlish = st.text(alphabet=st.sampled_from(list("abcdefgnrstuvxyz_:-[]{},. 0123456789\n'\"#&*!|>%@`")),
                  max_size=300)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(yamlish, st.text(max_size=200)))
def test_any_text_loads_or_is_an_hri_error(tmp_path, text):
    _load(tmp_path, text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(sorted(PRESET)), value=values)
def test_any_top_level_value_with_the_trees_checked_is_an_hri_error_or_loads(tmp_path, key, value):
    data = copy.deepcopy(PRESET)
    data[key] = value
    path = tmp_path / "fuzzed.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    try:
        load_scenario(str(path))
    except HriError:
        pass


@pytest.mark.parametrize("text, line, message", [
    ("0: !0", 1, "could not determine a constructor for the tag '!0'"),  # found by the test above
    ("name: x\nwhen: 2026-13-01", 2, "cannot read '2026-13-01': month must be in 1..12"),
    ("name: x\nsize: !!int many", 2, "cannot read 'many': invalid literal for int() with base 10: 'many'"),
    ("name: x\nzones: !!set {a, b}", 2, "a tag on a mapping or list (tag:yaml.org,2002:set): none is taken here"),
    ("name: x\nloop: &a [1, *a]", 2, "an alias inside what it names (endless)"),
    ("name: " + "[" * 3000 + "]" * 3000, 1, "nested too deeply"),
])
def test_text_yaml_cannot_make_values_of_is_one_line_with_its_place(tmp_path, text, line, message):
    path = tmp_path / "odd.yaml"
    path.write_text(text)
    with pytest.raises(HriError) as caught:
        load_scenario(str(path))
    assert str(caught.value) == f"{path}:{line}: malformed YAML: {message}"


@pytest.mark.parametrize("key", ["\n", "a\tb", "x\u2028y", "\x00"])
def test_a_key_with_a_line_break_or_control_character_is_named_on_one_line(tmp_path, key):
    # found by the property test above: the unknown key was quoted as it is, line break and all
    data = copy.deepcopy(PRESET)
    data["simulation"][key] = None
    path = tmp_path / "odd_key.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(HriError) as error:
        load_scenario(str(path), check_trees=False)
    message = str(error.value)
    assert message.isprintable() and "unknown key 'simulation." in message, message
    assert key.encode("unicode_escape").decode() in message
