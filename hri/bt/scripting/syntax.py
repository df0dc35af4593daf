"""The grammar of BehaviorTree.CPP 4.10's scripts, for lark's LALR parser, and the syntax
errors a user reads.

BehaviorTree.CPP parses with a Pratt parser (``script_parser.cpp``); the grammar below has
one rule per binding power, loosest first, so that it builds the same trees:

========================  ===========================================================
``:=  =  +=  -=  *=  /=``  right of anything but a ternary; right-associative
``? :``                    the branch after ``:`` is a ternary at most; right-associative
``||``, ``&&``             left-associative
``== != < > <= >=``        chained: ``a < b < c`` is ``a < b && b < c``
``| ^``, ``&``             left-associative
``+ - ..``, ``* /``        left-associative
``- ~ !`` (prefix)         bind tighter than any infix operator
========================  ===========================================================

Statements need no separator (``a:=1 b:=2`` is two statements) and any number of ``;``
may follow each. After a complete expression, ``-`` continues it (``a -b`` is a
subtraction) rather than starting a statement: the one shift/reduce conflict, which lark
resolves as a shift, like the Pratt parser.

The terminals reproduce BehaviorTree.CPP's tokenizer: a number runs on over the letters,
digits and dots stuck to it, so that ``3foo``, ``65.`` and ``0x1g`` are one invalid
number, while ``65..`` is the integer 65 then ``..``; identifiers may start with ``@``.
An invalid token is an operand of the grammar, so that it is reported where the parser
reaches it, as BehaviorTree.CPP reports it.
"""

from __future__ import annotations

from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedToken

from hri.bt.scripting.errors import ScriptSyntaxError

GRAMMAR = r"""
start: _statement+
_statement: expr _SEMI*

?expr: ternary
     | or_test (COLON_EQ | EQ | PLUS_EQ | MINUS_EQ | STAR_EQ | SLASH_EQ) expr -> assign
?ternary: or_test
        | or_test _QUESTION expr _COLON ternary -> ternary
?or_test: and_test | or_test OR_OR and_test -> binary
?and_test: comparison | and_test AND_AND comparison -> binary
?comparison: bit_or | bit_or ((EQ_EQ | NOT_EQ | LESS | GREATER | LESS_EQ | GREATER_EQ) bit_or)+ -> chain
?bit_or: bit_and | bit_or (PIPE | CARET) bit_and -> binary
?bit_and: sum | bit_and AMP sum -> binary
?sum: product | sum (PLUS | MINUS | DOT_DOT) product -> binary
?product: unary | product (STAR | SLASH) unary -> binary
?unary: atom | (MINUS | TILDE | BANG) unary -> unary
?atom: NUMBER -> number
     | NUMBER_BEFORE_AT -> number_before_at
     | STRING -> string
     | TRUE -> true
     | FALSE -> false
     | NAME -> name
     | _LPAR expr _RPAR
     | UNTERMINATED_STRING -> unterminated_string
     | BAD_CHARACTER -> bad_character

NAME: /[A-Za-z_@][A-Za-z0-9_]*/
TRUE: "true"
FALSE: "false"
NUMBER: /0[xX][.A-Za-z0-9_]*|[0-9]+(?:\.(?![.0-9])[.A-Za-z0-9_]*|(?:\.[0-9]+)?(?:[eE](?:[+-](?![0-9])|(?![+\-0-9]))|(?:[eE][+-]?[0-9]+)?[A-Za-z0-9_]*))/
NUMBER_BEFORE_AT.2: /[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?(?=@)/
STRING: /'[^']*'/
UNTERMINATED_STRING: /'[^']*\Z/
BAD_CHARACTER: /[^ \t\r\n'0-9A-Za-z_@+\-*\/&|^~!<>=?:();]|\.(?!\.)/

COLON_EQ: ":="
EQ: "="
PLUS_EQ: "+="
MINUS_EQ: "-="
STAR_EQ: "*="
SLASH_EQ: "/="
OR_OR: "||"
AND_AND: "&&"
EQ_EQ: "=="
NOT_EQ: "!="
LESS: "<"
GREATER: ">"
LESS_EQ: "<="
GREATER_EQ: ">="
PIPE: "|"
CARET: "^"
AMP: "&"
PLUS: "+"
MINUS: "-"
DOT_DOT: ".."
STAR: "*"
SLASH: "/"
TILDE: "~"
BANG: "!"
_QUESTION: "?"
_COLON: ":"
_LPAR: "("
_RPAR: ")"
_SEMI: ";"

%ignore /[ \t\r\n]+/
"""

MAX_SCRIPT_CHARS = 10_000
"""The longest script (the presets' are under 100 characters): a script is parsed when its
tree loads and run at every tick, so its size bounds the work of both."""
WHITESPACE = " \t\r\n"
"""The only characters BehaviorTree.CPP skips between tokens."""

_OPERAND_STARTS = {"NUMBER", "NUMBER_BEFORE_AT", "STRING", "TRUE", "FALSE", "NAME", "_LPAR",
                   "MINUS", "TILDE", "BANG", "UNTERMINATED_STRING", "BAD_CHARACTER"}
_OPERAND_ENDS = {"NUMBER", "STRING", "TRUE", "FALSE", "NAME", "_RPAR"}


class ScriptParser:
    """Parses code into whatever ``transformer`` builds from the grammar's rules, raising
    :class:`ScriptSyntaxError` for code BehaviorTree.CPP refuses."""

    def __init__(self, transformer: Transformer):
        # The transformer runs as each rule is reduced, so its syntax errors (a number out of
        # range) come in the order of the code, before any later parse error.
        self._lark = Lark(GRAMMAR, parser="lalr", lexer="basic", transformer=transformer)

    def parse(self, code: str) -> Any:
        if not code.strip(WHITESPACE):
            raise ScriptSyntaxError("empty script", 1)
        if len(code) > MAX_SCRIPT_CHARS:  # refused unparsed: its size is all that is said
            raise ScriptSyntaxError(f"a script of {len(code)} characters: at most {MAX_SCRIPT_CHARS} are taken", 1)
        try:
            return self._lark.parse(code)
        except UnexpectedToken as error:  # every character is some token: no lexer error
            raise self._unexpected(code, error) from None

    def _unexpected(self, code: str, error: UnexpectedToken) -> ScriptSyntaxError:
        tokens = list(self._lark.lex(code))
        if error.token.type == "$END":
            before, column, got = tokens, len(code) + 1, "the end of the script"
        else:
            before = [token for token in tokens if token.start_pos < error.token.start_pos]
            column, got = error.token.start_pos + 1, f"'{error.token}'"
        return ScriptSyntaxError(_explain(before, error.token.type, error.expected, got), column)


def _explain(before: list[Token], got_type: str, expected: set[str], got: str) -> str:
    """What is wrong when the parser, after the tokens ``before``, meets a token of type
    ``got_type`` (written ``got``) while it ``expected`` others."""
    previous = before[-1] if before else None
    if (previous is None or previous.type not in _OPERAND_ENDS) and got_type not in _OPERAND_STARTS \
            and expected & _OPERAND_STARTS:
        where = f" after '{previous}'" if previous is not None else ""
        return f"expected an operand{where}, got {got}"
    opener = _unclosed(before)
    if "_RPAR" in expected and opener is not None and opener.type == "_LPAR":
        return f"expected ')' to close the '(' at column {opener.start_pos + 1}, got {got}"
    if "_COLON" in expected and opener is not None and opener.type == "_QUESTION":
        return f"expected the ':' of the '?' at column {opener.start_pos + 1}, got {got}"
    return f"unexpected {got}"


def _unclosed(tokens: list[Token]) -> Token | None:
    """The innermost '(' or '?' still open at the end of ``tokens``."""
    open_: list[Token] = []
    for token in tokens:
        if token.type in ("_LPAR", "_QUESTION"):
            open_.append(token)
        elif token.type == "_RPAR":
            while open_ and open_.pop().type != "_LPAR":
                pass
        elif token.type == "_COLON" and open_ and open_[-1].type == "_QUESTION":
            open_.pop()
    return open_[-1] if open_ else None
