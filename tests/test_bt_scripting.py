"""BehaviorTree.CPP 4.10's scripting language (hri.bt.scripting): literals, operators,
precedence, run-time and syntax errors, and the same scripts run on BehaviorTree.CPP
itself (behaviortreepy: 4.8.2 here, 4.10 when a local build exists)."""

from __future__ import annotations

import importlib.util
import inspect
import json
import logging
import math
import random
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lark import Lark

from hri.bt.blackboard import EMPTY, Blackboard
from hri.bt.scripting import (
    Script,
    ScriptError,
    ScriptSyntaxError,
    format_value,
    parse_script,
)
from hri.bt.scripting.syntax import GRAMMAR

VENV_410_PYTHON = Path("/work/ref/venv410/bin/python")


def run(code: str, blackboard: Blackboard | None = None, enums: dict[str, int] | None = None) -> Any:
    return parse_script(code).run(blackboard if blackboard is not None else Blackboard(), enums or {})


def values(blackboard: Blackboard) -> dict[str, Any]:
    return {key: entry.value for key, entry in blackboard.local_entries().items()}


def same(value: Any, expected: Any) -> bool:
    """Equal and of the same type (1.0 is not 1), NaN equal to NaN."""
    if isinstance(expected, float) and math.isnan(expected):
        return isinstance(value, float) and math.isnan(value)
    return type(value) is type(expected) and value == expected


# -- literals --------------------------------------------------------------------------------

@pytest.mark.parametrize("code, expected", [
    ("628", 628), ("-628", -628.0), ("0x100", 256), ("0X1f", 31), ("007", 7),
    ("9223372036854775807", 2**63 - 1), ("0x7FFFFFFFFFFFFFFF", 2**63 - 1),
    ("3.14", 3.14), ("3.14e2", 314.0), ("3.14e-2", 0.0314), ("3e2", 300.0), ("3E-2", 0.03),
    ("1e-310", 1e-310), ("'hello world '", "hello world "), ("''", ""), ("'a;b'", "a;b"),
    ("true", 1.0), ("false", 0.0),
])
def test_literals(code: str, expected: Any) -> None:
    assert same(run(code), expected)


def test_an_integer_literal_that_overflows_int64_is_zero() -> None:
    # std::from_chars fails on overflow and leaves the initial 0 (4.8.2 refused the script).
    assert same(run("99999999999999999999"), 0)
    assert same(run("0xFFFFFFFFFFFFFFFF"), 0)


def test_true_and_false_are_doubles() -> None:
    # 4.10 makes them the doubles 1.0/0.0 (4.8.2: the integers 1/0).
    blackboard = Blackboard()
    run("t := true; f := false", blackboard)
    assert values(blackboard) == {"t": 1.0, "f": 0.0}
    assert isinstance(blackboard.get("t"), float)


# -- operators -------------------------------------------------------------------------------

@pytest.mark.parametrize("code, expected", [
    ("1 + 2", 3.0), ("7 - 10", -3.0), ("6 * 7", 42.0), ("7 / 2", 3.5), ("2.5 * 4", 10.0),
    ("1 / 0", math.inf), ("-1 / 0", -math.inf), ("1 / -0.0", -math.inf), ("0 / 0", math.nan),
    ("1e308 * 10", math.inf), ("-(3 + 2)", -5.0), ("- - 2", 2.0),
    ("'a' .. 'b'", "ab"), ("'n=' .. 5", "n=5"), ("2.5 .. '!'", "2.500000!"), ("'a' + 'b'", "ab"),
    ("65..'a'", "65a"), ("'x' .. -1", "x-1.000000"),
    ("6 & 3", 2.0), ("6 | 3", 7.0), ("6 ^ 3", 5.0), ("~5", -6.0), ("~0", -1.0), ("~2.5", -3.0),
    ("5 & 2.0", 0.0), ("-1 & 255", 255.0), ("true | 2", 3.0),
    ("true && false", 0.0), ("true || false", 1.0), ("1 && 1", 1.0), ("0.5 && 1", 1.0),
    ("!true", 0.0), ("!0", 1.0), ("!2.5", 0.0), ("!!true", 1.0), ("!(0/0)", 0.0),
    ("~(0/0)", 2.0**63),
    ("1 < 2", 1.0), ("2 <= 2", 1.0), ("3 > 2", 1.0), ("2 >= 3", 0.0), ("1 == 1.0", 1.0),
    ("1 != 1", 0.0), ("1.0 == 1.0000001", 1.0), ("1.0 == 1.000001", 0.0),
    ("'abc' < 'abd'", 1.0), ("'b' > 'abc'", 1.0), ("'ab' < 'abc'", 1.0), ("'a' == 'a'", 1.0),
    ("'a' != 'b'", 1.0), ("'3' == 3", 1.0), ("3 == '3.0'", 1.0), ("'3abc' == 3", 1.0),
    ("'true' == 1", 1.0), ("'false' == 0", 1.0), ("'.5' == 0.5", 1.0), ("'inf' > 1e308", 1.0),
    ("(0/0) < 1", 1.0), ("(0/0) > 1", 1.0), ("(0/0) == (0/0)", 0.0), ("(0/0) != 1", 1.0),
    ("(1/0) == (1/0)", 0.0),
    ("1 < 2 < 3", 1.0), ("3 > 2 > 1", 1.0), ("1 < 2 > 3", 0.0), ("5 == 5 == 5", 1.0),
    ("5 == 5 != 3", 1.0), ("1 <= 2 <= 3", 1.0), ("3 >= 2 >= 1", 1.0),
    ("true ? 1 : 2", 1), ("false ? 1 : 2", 2), ("2.5 ? 'y' : 'n'", "y"), ("'1' ? 'y' : 'n'", "y"),
    ("'0' ? 'y' : 'n'", "n"), ("3 > 2 ? 'yes' : 'no'", "yes"),
])
def test_operators(code: str, expected: Any) -> None:
    assert same(run(code), expected)


def test_concatenating_two_numbers_gives_no_value() -> None:
    assert run("1 .. 2") is EMPTY


def test_large_integers_are_converted_to_double_only_when_exact() -> None:
    blackboard = Blackboard()
    run("a := 9007199254740991; b := a + 1; c := 0x7FFFFFFFFFFFFFFF", blackboard)
    assert blackboard.get("b") == 2.0**53
    for code in ["c + 0", "c == 1", "-c", "c ? 1 : 2", "c & 1", "c += 0"]:
        with pytest.raises(ScriptError, match="too large"):
            run(code, blackboard)


def test_unsigned_entries() -> None:
    # Only an integer of 2**63 or more is a uint64 (a C++ unsigned entry holding less is
    # indistinguishable from an int64 here).
    blackboard = Blackboard()
    blackboard.set("u", 2**63)
    blackboard.set("i", 1)
    run("u = 5; u = 7.0", blackboard)
    assert same(blackboard.get("u"), 7)
    blackboard.set("u", 2**64 - 1)
    with pytest.raises(ScriptError, match="negative and can't be converted to unsigned"):
        run("u = -1", blackboard)
    with pytest.raises(ScriptError, match="larger than the largest int64"):
        run("i = u", blackboard)


def test_a_chained_comparison_stops_at_its_first_false_link() -> None:
    blackboard = Blackboard()
    run("n := 0; 2 < 1 < (n := 5)", blackboard)
    assert blackboard.get("n") == 0
    run("1 < 2 < (n := 5)", blackboard)
    assert blackboard.get("n") == 5


def test_logic_operators_evaluate_both_operands() -> None:
    blackboard = Blackboard()
    assert run("n := 0; false && (n := 1)", blackboard) == 0.0
    assert blackboard.get("n") == 1


def test_enums() -> None:
    enums = {"RED": 1, "BLUE": 3, "GREEN": 5}
    blackboard = Blackboard()
    blackboard.set("RED", "an entry")
    run("A := RED; B := RED; C := BLUE", blackboard, enums)
    assert values(blackboard)["A"] == 1.0  # the enum wins over the entry of the same name
    assert run("A == B", blackboard, enums) == 1.0
    assert run("A != C", blackboard, enums) == 1.0
    assert run("'GREEN' == 5", blackboard, enums) == 1.0  # a string compared with a number
    run("A = 'BLUE'", blackboard, enums)  # a string assigned to a number entry
    assert blackboard.get("A") == 3.0


def test_root_blackboard_names() -> None:
    root = Blackboard()
    child = Blackboard(parent=root)
    run("@x := 1; @x += 1; y := @x", child)
    assert values(root) == {"x": 2} and values(child) == {"y": 2}


def test_several_statements_give_the_last_value() -> None:
    blackboard = Blackboard()
    assert run("a:=1;;; b:=2;;", blackboard) == 2
    assert run("a:=10; b:=20; a+b", blackboard) == 30.0
    assert run("a := 1 b := 2 a + b", blackboard) == 3.0  # no ';' needed
    assert run("a := 3\n-1", blackboard) == 2.0  # '-' continues the expression
    assert run("A:=5;\nB:=6", blackboard) == 6


# -- assignment ------------------------------------------------------------------------------

@pytest.mark.parametrize("code, expected", [
    ("x := 1; x = 2", 2), ("x := 1; x += 2", 3), ("x := 10; x -= 3", 7), ("x := 3; x *= 2", 6),
    ("x := 3.0; x /= 2", 1.5), ("x := 2.5; x := 3", 3.0), ("x := 'a'; x += 'b'", "ab"),
    ("x := 5; x = '7'", 7.0), ("x := 5; x = 'true'", 1.0), ("x := 2.5; x = '1e3'", 1000.0),
    ("x := 1; x = true", 1), ("x := 1; x = 2.0", 2), ("x := 'x'; x += 1 .. ''", "x1"),
    ("x := 2; x := x * x", 4), ("(x) := 1", 1), ("x := y := 2", 2), ("x := (y := 3) + 1", 4.0),
])
def test_assignments(code: str, expected: Any) -> None:
    blackboard = Blackboard()
    run(code, blackboard)
    assert same(blackboard.get("x"), expected)


def test_assignment_creates_and_counts_writes() -> None:
    blackboard = Blackboard()
    run("x := 1; x += 1; x = 5", blackboard)
    assert blackboard.get_entry("x").sequence_id == 3


def test_typed_entries_keep_their_type() -> None:
    blackboard = Blackboard()
    blackboard.set("i", 5)
    blackboard.set("b", True)
    blackboard.set("f", 1.5)
    blackboard.set("s", "a")
    run("i = '7'; b = 'false'; f = 2; s = 'b'", blackboard)
    assert values(blackboard) == {"i": 7, "b": False, "f": 2.0, "s": "b"}
    assert same(blackboard.get("f"), 2.0) and same(blackboard.get("b"), False)
    run("b = 5", blackboard)  # Any stores a bool as an int64: it takes any integer
    assert same(blackboard.get("b"), 5)
    run("b := true", blackboard)
    assert same(blackboard.get("b"), 1)


def test_an_empty_entry_declared_by_a_port_takes_the_first_value() -> None:
    blackboard = Blackboard()
    blackboard.create_entry("n", int)
    blackboard.create_entry("s", str)
    run("n = 2.5; s = 'text'", blackboard)
    assert values(blackboard) == {"n": 2.5, "s": "text"}  # C++ stores a number as it is
    blackboard.create_entry("m", int)
    run("m = '12'", blackboard)  # a string is parsed by the port's type
    assert same(blackboard.get("m"), 12)


def test_an_untyped_entry_is_created_by_a_failed_assignment() -> None:
    blackboard = Blackboard()
    with pytest.raises(ScriptError):
        run("x := x + 1", blackboard)
    assert values(blackboard) == {"x": EMPTY}


# -- run-time errors -------------------------------------------------------------------------

@pytest.mark.parametrize("code, message", [
    ("y", "variable 'y' not found"),
    ("x := y", "variable 'y' not found"),
    ("e + 1", "left operand of '+' has no value"),
    ("1 - e", "right operand of '-' has no value"),
    ("e < 0", "left operand of '<' has no value"),
    ("0 == e", "right operand of '==' has no value"),
    ("-e", "operand of '-' has no value"),
    ("x := e", "right operand of ':=' has no value"),
    ("e += 1", "left operand of '+=' has no value"),
    ("x := 1 .. 2", "right operand of ':=' has no value"),
    ("e ? 1 : 2", "empty value"),
    ("x = 1", "'x' does not exist"),
    ("x += 1", "'x' does not exist"),
    ("1 := 2", "must be the name of a blackboard entry"),
    ("a + b := 2", "must be the name of a blackboard entry"),
    ("n := 1; n = 'abc'", "cannot convert the string 'abc' to a number"),
    ("n := 1; n = 2.5", ("cannot assign the number 2.500000 to entry 'n', which holds the integer 1: "
                         "2.500000 is not an integer")),
    ("n := 1; n := 2.5", "cannot assign the number 2.500000 to entry 'n'"),
    ("n := 1; n += 0.5", "cannot assign the number 1.500000 to entry 'n'"),
    ("n := 1; n /= 2", "cannot assign the number 0.500000 to entry 'n'"),
    ("n := 1; n += 'a'", "cannot assign the string '1a' to entry 'n', which holds the integer 1: the types differ"),
    ("s := 'a'; s = 1", "cannot assign the integer 1 to entry 's', which holds the string 'a'"),
    ("s := 'a'; s += 1", "'+=' needs a number in entry 's', which holds the string 'a'"),
    ("s := 'a'; s -= 'b'", "'-=' cannot be used with a string"),
    ("-'a'", "'-' cannot be applied to the string 'a'"),
    ("'a' - 'b'", "'-' cannot be applied to the string 'a' and the string 'b'"),
    ("1 + 'a'", "'+' cannot be applied to the integer 1 and the string 'a'"),
    ("'a' + 1.5", "'+' cannot be applied to the string 'a' and the number 1.500000"),
    ("5 & 2.5", "bitwise '&' needs two integers, got the integer 5 and the number 2.500000"),
    ("~1e30", "'~' needs a number in the int64 range"),
    ("2 || 1", "'||' needs booleans"),
    ("'a' && 1", "'&&' cannot be applied"),
    ("'abc' == 1", "cannot convert the string 'abc' to a number"),
    ("'true' ? 1 : 2", "cannot convert the string 'true'"),
    ("'' ? 1 : 2", "cannot convert the string ''"),
    ("x := 9007199254740993; x + 1", "too large"),
])
def test_runtime_errors(code: str, message: str) -> None:
    blackboard = Blackboard()
    blackboard.create_entry("e")
    with pytest.raises(ScriptError, match=re.escape(message)):
        run(code, blackboard)


def test_objects_are_neither_numbers_nor_strings() -> None:
    class Pose:
        pass

    blackboard = Blackboard()
    blackboard.set("p", Pose())
    blackboard.set("q", Pose())
    for code in ["p + 1", "p .. 'a'", "-p", "p == 1", "p == 'a'", "p ? 1 : 2", "x := 1; x = p",
                 "s := 'a'; s = p", "p = 1", "p = 'a'", "p += 'a'", "n := 1; n += p; n = p",
                 "c := p; c = 'a'", "p && 1", "p & 1"]:
        with pytest.raises(ScriptError):
            run(code, blackboard)
    run("p = q; copy := p", blackboard)  # an object goes into an entry holding its type
    assert blackboard.get("copy") is blackboard.get("q")
    with pytest.raises(ScriptError, match="a Pose cannot be converted to a bool"):
        parse_script("p").truth(blackboard)


def test_statements_before_an_error_keep_their_effects() -> None:
    blackboard = Blackboard()
    with pytest.raises(ScriptError):
        run("a := 1; b := c; d := 2", blackboard)
    assert values(blackboard) == {"a": 1, "b": EMPTY}  # ':=' made 'b' before reading 'c'


# -- truth (pre-conditions, ScriptCondition) -------------------------------------------------

@pytest.mark.parametrize("code, expected", [
    ("true", True), ("false", False), ("1", True), ("0", False), ("2.5", True), ("0.0", False),
    ("0/0", True), ("1 < 2", True), ("x := 0; x == 0", True), ("x := 1; x", True),
])
def test_truth(code: str, expected: bool) -> None:
    assert parse_script(code).truth(Blackboard()) is expected


@pytest.mark.parametrize("code, message", [
    ("2", "the integer 2 cannot be used as a boolean"), ("-1", "negative number -1.000000"),
    ("-0.5", "negative"), ("'true'", "str"), ("1 .. 2", "empty value"), ("x := 'a'", "str"),
])
def test_truth_errors(code: str, message: str) -> None:
    with pytest.raises(ScriptError, match=re.escape(message)):
        parse_script(code).truth(Blackboard())


# -- precedence and associativity ------------------------------------------------------------

@pytest.mark.parametrize("code, expected", [
    ("2 + 3 * 4 - 1", 13.0), ("5 - 2 + 1", 4.0), ("10 - 3 - 2", 5.0), ("12 / 3 / 2", 2.0),
    ("12 / 3 * 2", 8.0), ("(2 + 3) * 4", 20.0), ("2 * (3 + 4)", 14.0),
    ("6 | 3 & 5", 7.0), ("6 ^ 3 | 4", 5.0), ("1 | 2 ^ 3", 0.0),
    ("1 & 3 == 1", 1.0), ("1 | 2 < 3", 0.0), ("2 + 1 & 6", 2.0),
    ("false || true && true", 1.0), ("false && true || true", 1.0), ("true && (6 | 0)", 1.0),
    ("-2 * -3", 6.0), ("!1 == 0", 1.0), ("1 + 2 == 3", 1.0), ("1 == 1 && 2 == 2", 1.0),
    ("1 < 2 == 1", 0.0),  # chained: 1 < 2 and 2 == 1
    ("1 + 1 .. 'a'", "2.000000a"), ("'a' .. 1 + 1", None),
    ("2 * 3 .. ''", "6.000000"), ("10 + -3", 7.0), ("1 - -1", 2.0), ("-2 - 3", -5.0),
    ("1 ? 2 : 3 + 4", 2), ("0 ? 2 : 3 + 4", 7.0), ("1 ? 2 : 3 ? 4 : 5", 2),
    ("0 ? 2 : 0 ? 4 : 5", 5), ("0 ? 2 : 1 ? 4 : 5", 4), ("1 == 1 ? 'a' : 'b'", "a"),
    ("0 || 1 ? 'a' : 'b'", "a"), ("x := 1 ? 2 : 3", 2), ("x := y := 1 + 1", 2.0),
    ("(x := 2) * 3", 6.0), ("1 ? x := 5 : 6", 5), ("~1 + 1", -1.0), ("!0 + 1", 2.0),
])
def test_precedence_and_associativity(code: str, expected: Any) -> None:
    if expected is None:  # ('a' .. 1) + 1: a string plus a number
        with pytest.raises(ScriptError):
            run(code)
    else:
        assert same(run(code), expected)


def test_the_only_grammar_conflict_is_minus_after_an_expression(caplog: pytest.LogCaptureFixture) -> None:
    # After a complete expression '-' could start a new statement; like the Pratt parser,
    # the LALR parser shifts it as a subtraction.
    with caplog.at_level(logging.DEBUG, logger="lark"):
        Lark(GRAMMAR, parser="lalr", lexer="basic", debug=True)
    conflicts = [r.getMessage() for r in caplog.records if "conflict" in r.getMessage()]
    assert conflicts and all("terminal MINUS" in message for message in conflicts)


# -- syntax errors ---------------------------------------------------------------------------

SYNTAX_ERRORS = [
    ("", 1, "empty script"),
    (" \t\r\n ", 1, "empty script"),
    ("x := ", 6, "expected an operand after ':=', got the end of the script"),
    ("x := 1 +", 9, "expected an operand after '+'"),
    ("x := 1 +* 2", 9, "expected an operand after '+', got '*'"),
    ("x := ;", 6, "expected an operand after ':=', got ';'"),
    (";x := 1", 1, "expected an operand, got ';'"),
    ("x := 3foo", 6, "invalid number '3foo'"),
    ("x := 65.43foo", 6, "invalid number '65.43foo'"),
    ("x := 65.", 6, "invalid number '65.'"),
    ("x := 0x", 6, "invalid number '0x'"),
    ("x := 0xG", 6, "invalid number '0xG'"),
    ("x := 0X100.", 6, "invalid number '0X100.'"),
    ("x := 3e", 6, "the exponent has no digits"),
    ("x := 3e+", 6, "invalid number '3e+'"),
    ("x := 3@a", 6, "invalid number '3'"),
    ("x := 1e999", 6, "out of the range of a double"),
    ("x := 1e-400", 6, "out of the range of a double"),
    ("x := 'abc", 6, "unterminated string"),
    ("x := #", 6, "unexpected character '#'"),
    ('x := "a"', 6, "strings are written between single quotes"),
    ("x.y := 1", 2, "unexpected character '.'"),
    ("x := 1 ... 2", 10, "unexpected character '.'"),
    ("(x := 1", 8, "expected ')' to close the '(' at column 1, got the end of the script"),
    ("y := (1 + (2 * 3) 4", 19, "expected ')' to close the '(' at column 6, got '4'"),
    ("(a 3foo)", 4, "expected ')' to close the '(' at column 1, got '3foo'"),
    ("x := 1)", 7, "unexpected ')'"),
    ("x ? 1", 6, "expected the ':' of the '?' at column 3, got the end of the script"),
    ("x ? 1 2 : 3", 7, "expected the ':' of the '?' at column 3, got '2'"),
    ("a ? x := 1 : x := 2", 16, "unexpected ':='"),
    ("x := 1 = = 2", 10, "expected an operand after '=', got '='"),
    ("a && || b", 6, "expected an operand after '&&', got '||'"),
    ("x := !", 7, "expected an operand after '!'"),
    ("a ? : b", 5, "expected an operand after '?', got ':'"),
    ("x := 1 \f", 8, "unexpected character '\\x0c'"),
]


@pytest.mark.parametrize("code, column, message", SYNTAX_ERRORS)
def test_syntax_errors(code: str, column: int, message: str) -> None:
    with pytest.raises(ScriptSyntaxError) as error:
        parse_script(code)
    assert error.value.column == column
    assert message in error.value.message


def test_the_first_error_in_the_code_is_reported() -> None:
    with pytest.raises(ScriptSyntaxError) as error:
        parse_script("x := 3foo + ; 'abc")
    assert error.value.column == 6


def test_parse_once_share_the_script() -> None:
    assert parse_script("a := 1") is parse_script("a := 1")
    assert isinstance(parse_script("a := 1"), Script)


# -- format_value ----------------------------------------------------------------------------

@pytest.mark.parametrize("value, text", [
    (2.5, "2.500000"), (-0.0, "-0.000000"), (1e20, "100000000000000000000.000000"),
    (math.inf, "inf"), (-math.inf, "-inf"), (math.nan, "nan"), (-math.nan, "-nan"),
    (4, "4"), (-4, "-4"), (2**64 - 1, "18446744073709551615"), (True, "1"), (False, "0"),
    ("text", "text"), ("", ""),
])
def test_format_value(value: Any, text: str) -> None:
    assert format_value(value) == text


def test_format_value_of_what_has_no_text() -> None:
    for value in (EMPTY, object(), None):
        with pytest.raises(ScriptError):
            format_value(value)


# -- differential: the same scripts on BehaviorTree.CPP ---------------------------------------

Case = tuple[list[str], bool, dict[str, Any]]


def run_on_btcpp(codes: list[str], condition: bool, setup: dict[str, Any]) -> dict[str, Any]:
    """Run ``codes`` as the Script nodes of a Sequence (the last one a ScriptCondition when
    ``condition``) on BehaviorTree.CPP, with ``setup`` set on the root blackboard first.
    Self-contained: the interpreter of the 4.10 build runs it too."""
    from xml.sax.saxutils import quoteattr

    import behaviortreepy as bt

    nodes = "".join(
        f'<{"ScriptCondition" if condition and i == len(codes) - 1 else "Script"} code={quoteattr(code)}/>'
        for i, code in enumerate(codes))
    xml = f'<root BTCPP_format="4"><BehaviorTree ID="Main"><Sequence>{nodes}</Sequence></BehaviorTree></root>'
    blackboard = bt.Blackboard.create()
    for key, value in setup.items():
        kind = {bool: "bool", int: "int", float: "double", str: "string"}[type(value)]
        getattr(blackboard, f"set_{kind}")(key, value)
    outcome: dict[str, Any] = {"load_error": False, "error": False, "status": None, "blackboard": {}}
    try:
        tree = bt.BehaviorTreeFactory().create_tree_from_text(xml, blackboard)
    except Exception:
        outcome["load_error"] = True
        return outcome
    try:
        outcome["status"] = str(tree.tick_once()).rsplit(".", 1)[-1]
    except Exception:
        outcome["error"] = True
    for key in blackboard.get_keys():
        try:
            outcome["blackboard"][key] = blackboard.get_string(key)
        except Exception:  # an entry that holds no value
            outcome["blackboard"][key] = None
    return outcome


def run_on_ours(codes: list[str], condition: bool, setup: dict[str, Any]) -> dict[str, Any]:
    """What :func:`run_on_btcpp` gives, with hri.bt.scripting."""
    blackboard = Blackboard()
    for key, value in setup.items():
        blackboard.set(key, value)
    outcome: dict[str, Any] = {"load_error": False, "error": False, "status": None, "blackboard": {}}
    try:
        scripts = [parse_script(code) for code in codes]
    except ScriptSyntaxError:
        outcome["load_error"] = True
        return outcome
    try:
        for script in scripts[:-1]:
            script.run(blackboard)
        if condition:
            outcome["status"] = "SUCCESS" if scripts[-1].truth(blackboard) else "FAILURE"
        else:
            scripts[-1].run(blackboard)
            outcome["status"] = "SUCCESS"
    except ScriptError:
        outcome["error"] = True
    outcome["blackboard"] = {key: None if entry.value is EMPTY else format_value(entry.value)
                             for key, entry in blackboard.local_entries().items()}
    return outcome


def run_on_btcpp_4_10(cases: list[Case]) -> list[dict[str, Any]]:
    """:func:`run_on_btcpp` of each case, by the interpreter of the local 4.10 build."""
    driver = "from __future__ import annotations\n" + inspect.getsource(run_on_btcpp) + (
        "\nimport json, sys\nprint(json.dumps([run_on_btcpp(*case) for case in json.load(sys.stdin)]))\n")
    result = subprocess.run([str(VENV_410_PYTHON), "-c", driver], input=json.dumps(cases),
                            capture_output=True, text=True, check=True, timeout=600)
    return json.loads(result.stdout)


needs_4_10 = pytest.mark.skipif(not VENV_410_PYTHON.exists(), reason="no local BehaviorTree.CPP 4.10 build")


def S(*codes: str, **setup: Any) -> Case:
    """A case of Script nodes; ``setup``: entries set first (int, float, bool or str)."""
    return (list(codes), False, setup)


def C(*codes: str, **setup: Any) -> Case:
    """A case whose last node is a ScriptCondition."""
    return (list(codes), True, setup)


def case_id(case: Case) -> str:
    codes, condition, setup = case
    return ("if " if condition else "") + " | ".join(codes) + (f" {setup}" if setup else "")


# Cases where BehaviorTree.CPP 4.8.2 (installed) and 4.10 agree.
DIFFERENTIAL_CASES = [
    # literals
    S("x := 628"), S("x := -628"), S("x := 0x100"), S("x := 0X1f"), S("x := 3.14"),
    S("x := 3.14e2"), S("x := 3e-2"), S("x := 'hello world '"), S("x := ''"),
    S("x := 0x7FFFFFFFFFFFFFFF"), S("x := 9223372036854775807"), S("x := 1e308"), S("x := 007"),
    S("_a := 1; a_1 := 2"),
    # arithmetic, concatenation
    S("x := 1 + 2"), S("x := 7 - 10"), S("x := 6 * 7"), S("x := 7 / 2"), S("x := 1 / 0"),
    S("x := -1 / 0"), S("x := 0 / 0"), S("x := 2.5 * 4"), S("x := 1e308 * 10"),
    S("x := 'a' .. 'b'"), S("x := 'n=' .. 5"), S("x := 2.5 .. '!'"), S("x := 'a' + 'b'"),
    S("x := 1 .. 2"), S("x := 'a' - 'b'"), S("x := 1 + 'a'"), S("x := -'a'"),
    # bitwise, logic
    S("x := 6 & 3"), S("x := 6 | 3"), S("x := 6 ^ 3"), S("x := ~5"), S("x := ~0"),
    S("x := 5 & 2.0"), S("x := 5 & 2.5"), S("x := ~2.5"), S("x := ~1e30"), S("x := ~(0.0/0)"),
    S("x := true && false"), S("x := true || false"), S("x := !true"), S("x := !0"), S("x := !2.5"),
    S("x := 1 && 1"), S("x := 2 && 1"), S("x := 0.5 && 1"), S("x := -0.5 || 1"), S("x := 'a' && 1"),
    S("x := !(0.0/0)"),
    # comparisons
    S("x := 1 < 2"), S("x := 2 <= 2"), S("x := 3 > 2"), S("x := 2 >= 3"), S("x := 1 == 1.0"),
    S("x := 1 != 1"), S("x := 1.0 == 1.0000001"), S("x := 1.0 == 1.000001"), S("x := 1 < 2 < 3"),
    S("x := 3 > 2 > 1"), S("x := 1 < 2 > 3"), S("x := 5 == 5 == 5"), S("x := 'abc' < 'abd'"),
    S("x := 'b' > 'abc'"), S("x := 'a' == 'a'"), S("x := 'ab' < 'abc'"), S("x := '3' == 3"),
    S("x := 3 == '3.0'"), S("x := 'true' == 1"), S("x := 'false' == 0"), S("x := 'abc' == 1"),
    S("x := '3abc' == 3"), S("x := (0.0/0) < 1"), S("x := (0.0/0) == (0.0/0)"),
    S("x := (1/0) == (1/0)"), S("x := '1e-400' == 0"), S("x := 'inf' > 1"),
    S("x := '-Infinity' < 0"), S("x := 'nan(12)' != 0"), S("x := '1 ' == 1"), S("x := '.5' == 0.5"),
    S("x := '5.' == 5"), S("x := '1e' == 1"), S("x := '' == 0"),
    # ternary
    S("x := true ? 1 : 2"), S("x := false ? 1 : 2"), S("x := 3 > 2 ? 'yes' : 'no'"),
    S("x := '1' ? 'a' : 'b'"), S("x := 'true' ? 1 : 2"), S("x := '' ? 1 : 2"), S("x := 2.5 ? 1 : 2"),
    S("x := 0 ? 1 : 2"),
    # precedence
    S("x := 2 + 3 * 4 - 1"), S("x := (2 + 3) * 4"), S("x := 6 | 3 & 5"), S("x := 6 ^ 3 | 4"),
    S("x := 1 | 2 ^ 3"), S("x := false || true && true"), S("x := false && true || true"),
    S("x := -2 * -3"), S("x := - - 2"), S("x := !1 == 0"), S("x := 1 + 2 == 3"),
    S("x := 1 == 1 && 2 == 2"), S("x := 1 < 2 == 1"), S("x := 1 & 3 == 1"), S("x := 1 | 2 < 3"),
    S("x := 10 + -3"), S("x := 1 - -1"), S("x := 1 ? 2 : 3 + 4"), S("x := 0 ? 2 : 3 + 4"),
    # assignments
    S("x := 1; x = 2"), S("x := 1; x += 2"), S("x := 10; x -= 3"), S("x := 3; x *= 2"),
    S("x := 3; x /= 2"), S("x := 3.0; x /= 2"), S("x := 1; x += 0.5"), S("x := 2; x := 2.5"),
    S("x := 2.5; x := 3"), S("x := 'a'; x += 'b'"), S("x := 'a'; x -= 'b'"), S("x := 'a'; x += 1"),
    S("x := 1; x += 'a'"), S("x := 'a'; x = 1"), S("x := 5; x = '7'"), S("x := 5; x = 'true'"),
    S("x := 1; x = 'abc'"), S("x := 2.5; x = '1e3'"), S("x = 1"), S("x += 1"), S("x := x + 1"),
    S("1 := 2"), S("x := (y := 3) + 1"), S("x := 1; x = true"), S("x := 1; x = 2.0"),
    S("x := 'a'; x = 'b'"), S("x := 'x'; x += 1 .. ''"), S("(x) := 1"), S("x := 2; x := x * x"),
    S("a := 1; b := a; b += 1"), S("@x := 1; @x += 1"), S("@ := 3"), S("x := y"),
    S("a := 1; b := c; d := 2"), S("x := 1", "y := x + 1", "x += y"),
    # entries typed by their first value, set from C++ (set_int, set_bool, ...)
    S("x = '7'", x=5), S("x = 'abc'", x=5), S("x = 2.5", x=5), S("x = 2.0", x=5), S("x += 1", x=5),
    S("x = x + 1", x=5), S("x := 3", x=5), S("x = 5", x=True), S("x = false", x=True),
    S("x = 'false'", x=True), S("x = 2.0", x=True), S("x += 1", x=True), S("x = !x", x=True),
    S("y := x && true", x=True), S("x = 2", x=1.5), S("x = '2.25'", x=1.5), S("x += 1", x=1.5),
    S("x = 'b'", x="a"), S("x = 3", x="a"), S("x += 3", x="3"), S("x += 'c'", x="a"),
    S("x = x .. 1", x="a"), S("y := x + 1", x="2"), S("y := x == 2", x="2"),
    # large integers
    S("x := 9007199254740993; y := x + 1"), S("x := 9007199254740991; y := x + 1"),
    S("x := 9007199254740993; y := x == 1"), S("x := 9007199254740993; y := x"),
    S("x := 9007199254740993; x += 1"),
    # statements
    S("a:=10; b:=20; c := a+b"), S("a := 1\n-1"), S("A:=5;\nB:=6"),
    # conditions
    C("x := 0; x == 0"), C("x := 2"), C("x := 'a'"), C("x := 2.5"), C("x := 1; x"), C("1 .. 2"),
    C("0"), C("1"), C("true"), C("false"), C("x := 0; x"), C("(0.0/0)"), C("2 > 1 ? 1 : 0"),
    C("-1"), C("-0.5"), C("x := 1", "x == 2"), C("x := 1", "x == 1"), C("x := 'a' == 'a'"),
    # syntax errors
    S("   "), S("x := "), S("x := 3foo"), S("x := 'abc"), S("x := 65."), S("x := 0x"), S("x := 0xG"),
    S("x := 3e"), S("x := 3e+"), S("x := 1e999"), S("x := 1e-400"), S("(x := 1"), S("x := 1)"),
    S("x ? 1"), S(";x := 1"), S("x := #"), S("x := 1 +* 2"), S("x.y := 1"), S("x := 3@a"),
    S("x := 1", "y := +"), S("x := 1 \f"),
]


def ok(**blackboard: str | None) -> dict[str, Any]:
    return {"load_error": False, "error": False, "status": "SUCCESS", "blackboard": blackboard}


def fails(**blackboard: str | None) -> dict[str, Any]:
    return {"load_error": False, "error": True, "status": None, "blackboard": blackboard}


REFUSED = {"load_error": True, "error": False, "status": None, "blackboard": {}}

_LEFT = "4.10 fixed the associativity (BehaviorTree.CPP issue 1029); 4.8.2 computes a - (b + c)"
_FROM_CHARS = "4.10 reads a string as a number with std::from_chars; 4.8.2 with std::stod"
_PRECEDENCE = "4.10 has one precedence table for every operator; 4.8.2 refuses this mix"
_CHAINED = "4.10 chains assignments (right-associative); 4.8.2 refuses"
_OVERFLOW = "4.10 reads an int64 overflow as 0 (std::from_chars leaves it); 4.8.2 refuses"

# Where 4.8.2 differs from 4.10: the outcome of 4.10 (checked on the 4.10 build when present).
PINNED_4_10 = [
    (S("x := true; y := false"), ok(x="1.000000", y="0.000000"), "4.10 makes true/false doubles; 4.8.2 integers"),
    (S("x := true; x = 3"), ok(x="3.000000"), "4.10 makes true a double, and the entry stays one"),
    (S("x := 1e-310"), ok(x="0.000000"), "4.10 reads a subnormal real; 4.8.2 refuses it"),
    (S("x := '1e-310' == 0"), ok(x="1.000000"), _FROM_CHARS + ", which refuses a subnormal"),
    (S("x := '+1' == 1"), fails(x=None), _FROM_CHARS + ", which takes a '+'"),
    (S("x := ' 1' == 1"), fails(x=None), _FROM_CHARS + ", which skips a space"),
    (S("x := '0x10' == 0"), ok(x="1.000000"), _FROM_CHARS + ", which reads hexadecimal"),
    (S("x := 65..'a'"), ok(x="65a"), "4.10 reads '65..' as 65 then '..'; 4.8.2 as the real '65.'"),
    (S("x := 5 - 2 + 1"), ok(x="4.000000"), _LEFT),
    (S("x := 10 - 3 - 2"), ok(x="5.000000"), _LEFT),
    (S("x := 12 / 3 / 2"), ok(x="2.000000"), _LEFT),
    (S("x := 12 / 3 * 2"), ok(x="8.000000"), _LEFT),
    (S("x := 1 ? 2 : 3 ? 4 : 5"), ok(x="2"), "4.10 nests a ternary in the ':' branch; 4.8.2 refuses"),
    (S("x := 0 ? 2 : 0 ? 4 : 5"), ok(x="5"), "4.10 nests a ternary in the ':' branch; 4.8.2 refuses"),
    (S("x := -1 & 255"), ok(x="255.000000"), _PRECEDENCE),
    (S("x := 1 + 1 .. 'a'"), ok(x="2.000000a"), _PRECEDENCE),
    (S("x := 'a' .. 1 + 1"), fails(x=None), _PRECEDENCE + " ('a' .. 1) + 1 adds a number to a string"),
    (S("x := 2 * 3 .. ''"), ok(x="6.000000"), _PRECEDENCE),
    (S("x := 2 + 1 & 6"), ok(x="2.000000"), _PRECEDENCE),
    (S("x := ~1 + 1"), ok(x="-1.000000"), _PRECEDENCE),
    (S("x := 1; y := x = 4"), ok(x="4", y="4"), _CHAINED),
    (S("x := y := 2"), ok(x="2", y="2"), _CHAINED),
    (S("x := @y := 3"), ok(x="3", y="3"), _CHAINED),
    (S("a:=1;;; b:=2;;"), ok(a="1", b="2"), "4.10 takes any number of ';' after a statement; 4.8.2 one"),
    (S("x := 1 y := 2"), ok(x="1", y="2"), "4.10 needs no ';' between statements; 4.8.2 does"),
    (S("x := 99999999999999999999"), ok(x="0"), _OVERFLOW),
    (S("x := 0xFFFFFFFFFFFFFFFF"), ok(x="0"), _OVERFLOW),
    (S('x := "a"'), REFUSED, "4.10 has single-quoted strings only; 4.8.2 takes double quotes too"),
    (S("x := 1; a ? x := 1 : x := 2"), REFUSED,
     ("4.10's ':' branch is a ternary at most, so the ':=' after it is a syntax error; 4.8.2 fails "
      "when it runs")),
]


@pytest.mark.parametrize("case", DIFFERENTIAL_CASES, ids=case_id)
def test_same_as_behaviortree_cpp(case: Case) -> None:
    pytest.importorskip("behaviortreepy")
    assert run_on_ours(*case) == run_on_btcpp(*case)


@pytest.mark.parametrize("case, outcome, reason", PINNED_4_10, ids=[case_id(pin[0]) for pin in PINNED_4_10])
def test_where_4_8_differs_we_follow_4_10(case: Case, outcome: dict[str, Any], reason: str) -> None:
    assert run_on_ours(*case) == outcome, reason
    if importlib.util.find_spec("behaviortreepy") is not None:
        assert run_on_btcpp(*case) != outcome, f"4.8.2 no longer differs ({reason}): move the case"


@needs_4_10
def test_same_as_behaviortree_cpp_4_10() -> None:
    cases = DIFFERENTIAL_CASES + [case for case, _, _ in PINNED_4_10]
    expected = [None] * len(DIFFERENTIAL_CASES) + [outcome for _, outcome, _ in PINNED_4_10]
    mismatches = [(case_id(case), ours, theirs)
                  for case, pinned, theirs in zip(cases, expected, run_on_btcpp_4_10(cases))
                  for ours in [run_on_ours(*case)] if ours != theirs or pinned not in (None, theirs)]
    assert not mismatches


def btcpp_parse_error(code: str) -> str | None:
    """The message of BehaviorTree.CPP refusing a Script node of ``code``, or None.
    Self-contained: the interpreter of the 4.10 build runs it."""
    from xml.sax.saxutils import quoteattr

    import behaviortreepy as bt

    xml = f'<root BTCPP_format="4"><BehaviorTree ID="Main"><Script code={quoteattr(code)}/></BehaviorTree></root>'
    try:
        bt.BehaviorTreeFactory().create_tree_from_text(xml)
    except Exception as error:
        return str(error)
    return None


@needs_4_10
def test_syntax_error_columns_as_4_10_reports_them() -> None:
    codes = [code for code, _, _ in SYNTAX_ERRORS if code.strip(" \t\r\n")]
    driver = "from __future__ import annotations\n" + inspect.getsource(btcpp_parse_error) + (
        "\nimport json, sys\nprint(json.dumps([btcpp_parse_error(code) for code in json.load(sys.stdin)]))\n")
    result = subprocess.run([str(VENV_410_PYTHON), "-c", driver], input=json.dumps(codes),
                            capture_output=True, text=True, check=True, timeout=120)
    for code, message in zip(codes, json.loads(result.stdout)):
        position = re.search(r"position (\d+)", message)
        with pytest.raises(ScriptSyntaxError) as error:
            parse_script(code)
        if position:  # 4.10 gives none for a real out of range
            assert error.value.column == int(position.group(1)) + 1, (code, message)


def random_script(generator: random.Random, depth: int) -> str:
    """A script of random operators and operands, mostly valid."""
    atoms = ["a", "b", "c", "x", "y", "@a", "1", "0", "2", "-1", "2.5", "0.0", "1e3", "0x10", "'s'",
             "'3'", "''", "'true'", "true", "false", "(0.0/0)", "(1/0)", "9007199254740993", "n"]
    draw = generator.random()
    if depth <= 0 or draw < 0.25:
        return generator.choice(atoms)
    if draw < 0.35:
        return generator.choice("-!~") + random_script(generator, depth - 1)
    if draw < 0.7:
        op = generator.choice(["+", "-", "*", "/", "..", "&", "|", "^", "&&", "||", "==", "!=", "<", ">", "<=", ">="])
        return f"{random_script(generator, depth - 1)} {op} {random_script(generator, depth - 1)}"
    if draw < 0.8:
        return f"({random_script(generator, depth - 1)})"
    if draw < 0.9:
        return " ? ".join([random_script(generator, depth - 1), random_script(generator, depth - 1)]) + \
            " : " + random_script(generator, depth - 1)
    op = generator.choice([":=", "=", "+=", "-=", "*=", "/="])
    return f"{generator.choice(['a', 'b', 'c', 'x', '@z', 'n'])} {op} {random_script(generator, depth - 1)}"


def random_tokens(generator: random.Random) -> str:
    """A short string of tokens and characters, mostly invalid: exercises the tokenizer."""
    tokens = ["a", "@c", "1", "2.5", "0x1F", "'s'", "'", "3foo", "65.", "..", "+", "-", "*", "&&", "==",
              "<=", ":=", "=", "+=", "?", ":", "(", ")", ";", "#", ".", "e", "1e", "true", "x", "3"]
    if generator.random() < 0.5:
        return "".join(generator.choice("a1.e+-x@' ();:=?0&|!<>*/~^2") for _ in range(generator.randint(1, 9)))
    return "".join(generator.choice(tokens) + generator.choice(["", " "]) for _ in range(generator.randint(1, 10)))


@pytest.mark.slow
@needs_4_10
def test_random_scripts_as_4_10_runs_them() -> None:
    generator = random.Random(28)
    setups = [{"a": 1, "b": 2.5, "c": "s"}, {"a": True, "b": "2", "x": 3}, {"x": 2.0, "c": "abc", "a": False}]
    cases = [([random_script(generator, generator.randint(1, 4)) if i % 3 else random_tokens(generator)],
              generator.random() < 0.3, generator.choice(setups)) for i in range(6000)]
    mismatches = [(case_id(case), ours, theirs) for case, theirs in zip(cases, run_on_btcpp_4_10(cases))
                  for ours in [run_on_ours(*case)] if ours != theirs]
    assert not mismatches[:5]


# --- limits: what a script may make and how large it may be ---------------------------------

def test_a_string_longer_than_the_cap_is_a_script_error_before_it_is_made() -> None:
    from hri.bt.scripting.operators import MAX_STRING_CHARS

    blackboard = Blackboard()
    blackboard.set("s", "x")
    for _ in range(20):  # 2**20 characters: at the cap
        run("s := s + s", blackboard)
    assert len(blackboard.get("s")) == MAX_STRING_CHARS
    for code in ("s := s + 'y'", "s := s .. 1"):
        with pytest.raises(ScriptError, match=rf"would make a string of {MAX_STRING_CHARS + 1} characters "
                                              rf"\(at most {MAX_STRING_CHARS}\)"):
            run(code, blackboard)
    assert len(blackboard.get("s")) == MAX_STRING_CHARS  # the entry keeps its value


def test_a_doubling_string_ends_the_tick_with_one_line_naming_the_node(tmp_path) -> None:
    from bt_harness import Harness

    from hri.base.errors import HriError

    harness = Harness(tmp_path, '<Repeat num_cycles="-1"><Script code="s := s + s"/></Repeat>', s="x")
    with pytest.raises(HriError) as caught:
        for _ in range(25):
            harness.tick()
    assert str(caught.value) == (f"{tmp_path / 'tree.xml'}:3: Script 'Script': script 's := s + s': '+' would make a string "
                                 "of 2097152 characters (at most 1048576)")


def test_a_script_longer_than_the_cap_is_refused_unparsed() -> None:
    from hri.bt.scripting.syntax import MAX_SCRIPT_CHARS

    assert run("1" * MAX_SCRIPT_CHARS) == 0  # an integer beyond int64 is 0, as BehaviorTree.CPP reads it
    with pytest.raises(ScriptSyntaxError, match=f"a script of {MAX_SCRIPT_CHARS + 1} characters: at most "
                                                f"{MAX_SCRIPT_CHARS} are taken"):
        parse_script("1" * (MAX_SCRIPT_CHARS + 1))


def test_an_integer_of_thousands_of_digits_is_read_as_behaviortree_cpp_reads_it() -> None:
    """Past int64 a literal is 0 (std::from_chars leaves it untouched), however many digits:
    Python's own limit (4300 digits) is never reached."""
    assert run("0" * 5000 + "42") == 42
    assert run("9" * 9000) == 0
    assert run("0x" + "0" * 5000 + "ff") == 255


def test_operations_nested_deeper_than_the_cap_are_a_syntax_error() -> None:
    from hri.bt.scripting.compiler import MAX_DEPTH

    assert run("+".join(["1"] * MAX_DEPTH)) == float(MAX_DEPTH)  # MAX_DEPTH - 1 additions, MAX_DEPTH deep
    with pytest.raises(ScriptSyntaxError, match=f"operations nested deeper than {MAX_DEPTH} levels") as caught:
        parse_script("+".join(["1"] * (MAX_DEPTH + 1)))
    assert caught.value.column == 2 * MAX_DEPTH  # at the operator that goes too deep
    with pytest.raises(ScriptSyntaxError, match="nested deeper"):
        parse_script("x := " + "-" * MAX_DEPTH + "1")
