"""The ease.ml/ci condition language: a tokenizer and a recursive-descent parser.

Pure Python (no numpy, no param, no Panel).  The user's text is *parsed*, never
evaluated: numbers go through :func:`~meter_dashboard.core.validation.parse_exact_decimal`
(exact decimals whose size and digits are bounded before any arithmetic, so
``1e30000000`` is refused at once), and the only names are the three variables.

The cost of a condition is bounded before and while it is parsed: at most
:data:`MAX_CONDITION_CHARS` characters, :data:`MAX_CLAUSES` clauses and
:data:`MAX_DEPTH` nested parentheses; runs of unary signs are read iteratively; every
coefficient a product or sum creates stays within 1e-30..1e30 in size (so no
intermediate grows into a huge rational).  Each refusal is a :class:`ConditionError`
with the column.

Grammar (Renggli et al. 2019, Appendix A.1), as implemented::

    condition :- clause ( "/\\" clause )*            F :- C | C /\\ F
    clause    :- expr cmp number "+/-" number        C :- EXP cmp c +/- c
    cmp       :- ">" | "<"
    expr      :- term ( ("+" | "-") term )*          EXP :- v | v op1 EXP
    term      :- unary ( "*" unary )*                   | EXP op2 c
    unary     :- ("+" | "-") unary | primary
    primary   :- number | "n" | "o" | "d" | "(" expr ")"

Conventional precedence (``*`` binds tighter than ``+``/``-``) resolves the paper's
ambiguous ``EXP op2 c``; a constant may stand on either side of ``*`` (the paper's own
example writes ``n - 1.1 * o``), and parentheses group (``(n - o) * 2``).  Three
restrictions keep the language the paper's: the left side is *linear* in n, o, d
(only constants multiply), it has no additive constants (move them to the right
side), and it mentions at least one variable.  ``±`` is accepted for ``+/-`` and ``∧``
for ``/\\``.

Every clause is normalized to a linear form ``sum_v a_v * v`` with exact rational
coefficients (like terms combined: ``n + n`` is ``2 n``, one estimate).

Errors are :class:`ConditionError` (an :class:`~meter_dashboard.core.validation.InputError`)
that name the column (1-based) and say what was expected there, e.g.::

    column 7: condition must be well-formed: expected '>' or '<' after the left side, found '='; got 'n - o = 0.1 +/- 0.01'
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from ..core.validation import MAX_EXACT_EXPONENT, InputError, parse_exact_decimal, raw

__all__ = [
    "MAX_CONDITION_CHARS",
    "MAX_CLAUSES",
    "MAX_DEPTH",
    "VARIABLES",
    "VARIABLE_NAMES",
    "Clause",
    "Condition",
    "ConditionError",
    "parse_condition",
    "format_number",
]

#: The variables of the language, in canonical order.
VARIABLES = ("n", "o", "d")
VARIABLE_NAMES = {
    "n": "the new model's accuracy",
    "o": "the old model's accuracy",
    "d": "the fraction of predictions that changed",
}

EXAMPLE = "n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01"

#: The longest condition accepted (real conditions are well under 200 characters).
MAX_CONDITION_CHARS = 2000
#: Clauses in one condition (each costs a label count per adaptivity and per curve point).
MAX_CLAUSES = 32
#: Nested parentheses.
MAX_DEPTH = 50
#: Size of any coefficient or constant a product or sum creates: 10**-MAX_EXACT_EXPONENT..10**MAX_EXACT_EXPONENT,
#: with its numerator and denominator below 2**_MAX_BITS.
_LIMIT = Fraction(10) ** MAX_EXACT_EXPONENT
_MAX_BITS = 512


class ConditionError(InputError):
    """A condition that does not parse; ``column`` (1-based) points at the problem."""

    def __init__(self, text: str, column: int, expected: str, found: str):
        self.text = text
        self.column = column
        self.expected = expected
        self.found = found
        super().__init__("condition", f"well-formed: expected {expected}, found {found}", raw(_quote(text)),
                         location=f"column {column}")

    def pointer(self) -> str:
        """The condition with a caret under the offending column (for a monospace display)."""
        return f"{self.text}\n{' ' * (self.column - 1)}^"


def _quote(text: str, limit: int = 120) -> str:
    """Quote user text without escaping backslashes (``/\\`` stays readable)."""
    text = str(text)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return "'" + text + "'"


# ============================================================================ tokens
@dataclass(frozen=True)
class _Token:
    kind: str  # NUM VAR + - * ( ) > < PM AND END
    text: str
    column: int  # 1-based
    value: Fraction | None = None

    @property
    def number(self) -> Fraction:
        """A NUM token's value (the tokenizer gives every NUM token one)."""
        if self.value is None:
            raise TypeError(f"a {self.kind} token has no number")
        return self.value


def _describe(tok: _Token) -> str:
    if tok.kind == "END":
        return "the end of the condition"
    return _quote(tok.text)


_SINGLE = {"+": "+", "-": "-", "*": "*", "(": "(", ")": ")", ">": ">", "<": "<", "±": "PM", "∧": "AND"}


_SPACED_PM = re.compile(r"\+\s*/\s*-")


def _number(text: str, col: int, literal: str) -> Fraction:
    """A literal as an exact rational, its size and digits bounded first (never a huge integer)."""
    if literal.count(".") > 1:
        raise ConditionError(text, col, "a number", _quote(literal))
    try:
        return parse_exact_decimal("condition", literal)
    except InputError as exc:
        raise ConditionError(text, col, exc.rule, _quote(literal[:40])) from None


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i = 0
    length = len(text)
    if length > MAX_CONDITION_CHARS:
        raise ConditionError(text, MAX_CONDITION_CHARS + 1, f"a condition of at most {MAX_CONDITION_CHARS:,} "
                             "characters", f"{length:,} characters")
    while i < length:
        ch = text[i]
        col = i + 1
        if ch.isspace():
            i += 1
            continue
        spaced = _SPACED_PM.match(text, i) if ch == "+" else None
        if spaced and spaced.group(0) != "+/-":
            raise ConditionError(text, col, "'+/-' written without spaces", _quote(spaced.group(0)))
        if text.startswith("+/-", i):
            tokens.append(_Token("PM", "+/-", col))
            i += 3
            continue
        if text.startswith("/\\", i):
            tokens.append(_Token("AND", "/\\", col))
            i += 2
            continue
        if ch in "<>" and i + 1 < length and text[i + 1] == "=":
            raise ConditionError(text, col, "'>' or '<' (comparisons are strict; '>=' and '<=' are not in the "
                                 "grammar)", _quote(text[i:i + 2]))
        if ch in _SINGLE:
            tokens.append(_Token(_SINGLE[ch], ch, col))
            i += 1
            continue
        if ch.isdigit() or (ch == "." and i + 1 < length and text[i + 1].isdigit()):
            j = i
            while j < length and (text[j].isdigit() or text[j] == "."):
                j += 1
            if j < length and text[j] in "eE":
                k = j + 1
                if k < length and text[k] in "+-":
                    k += 1
                if k < length and text[k].isdigit():
                    j = k
                    while j < length and text[j].isdigit():
                        j += 1
            literal = text[i:j]
            tokens.append(_Token("NUM", literal, col, _number(text, col, literal)))
            i = j
            continue
        if ch.isalpha() or ch == "_":
            j = i
            while j < length and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            if word in VARIABLES:
                tokens.append(_Token("VAR", word, col))
            else:
                raise ConditionError(text, col, "a variable n (new accuracy), o (old accuracy) or d (changed "
                                     "predictions)", _quote(word))
            i = j
            continue
        if ch == "/":
            raise ConditionError(text, col, "'/\\' between clauses (division is not supported: write 0.5 * n, "
                                 "not n / 2)", _quote(ch))
        if ch == "=":
            raise ConditionError(text, col, "'>' or '<' (there is no '=' in the grammar)", _quote(ch))
        if ch == "&" or ch == "|":
            raise ConditionError(text, col, "'/\\' to join clauses (only conjunction is supported)", _quote(ch))
        raise ConditionError(text, col, "a variable, a number, an operator (+ - * > < +/- /\\) or a parenthesis",
                             _quote(ch))
    tokens.append(_Token("END", "", length + 1))
    return tokens


# ============================================================================ results
def format_number(value: Fraction) -> str:
    """An exact rational as the shortest decimal that represents it (``p/q`` if none does).

    References
    ----------
    Used to write conditions in the normal form of Appendix A.1 (Renggli et al. 2019).
    """
    value = Fraction(value)
    den = value.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:
        return f"{value.numerator}/{value.denominator}"
    places = max(twos, fives)
    if not places:
        return str(value.numerator)
    scaled = value.numerator * 10**places // value.denominator  # exact: the denominator divides 10**places
    digits = str(abs(scaled)).rjust(places + 1, "0")
    text = f"{'-' if scaled < 0 else ''}{digits[:-places]}.{digits[-places:]}"
    return text.rstrip("0").rstrip(".")


@dataclass(frozen=True)
class Clause:
    """One comparison ``sum_v a_v v  cmp  threshold +/- tolerance``.

    Attributes
    ----------
    coefficients : tuple of (variable, Fraction)
        The linear form of the left side, in the order n, o, d; zero terms dropped.
    comparison : {'>', '<'}
    threshold : Fraction
        The right-hand constant c.
    tolerance : Fraction
        The error tolerance epsilon after ``+/-`` (> 0).
    source : str
        The clause as the user wrote it.
    column : int
        Where it starts in the condition (1-based).
    """

    coefficients: tuple
    comparison: str
    threshold: Fraction
    tolerance: Fraction
    source: str = ""
    column: int = 1

    @property
    def variables(self) -> tuple:
        return tuple(v for v, _ in self.coefficients)

    def coefficient(self, variable: str) -> Fraction:
        return dict(self.coefficients).get(variable, Fraction(0))

    @cached_property
    def weight(self) -> Fraction:
        """``W = sum_v |a_v| r_v`` with every range r_v = 1 (n, o, d lie in [0, 1])."""
        return sum((abs(a) for _, a in self.coefficients), Fraction(0))

    @property
    def is_difference(self) -> bool:
        """Whether the left side is ``a (n - o)`` for some a != 0 (Pattern 1 / Pattern 2)."""
        coeffs = dict(self.coefficients)
        return set(coeffs) == {"n", "o"} and coeffs["n"] == -coeffs["o"]

    @property
    def difference_scale(self) -> Fraction:
        """``a`` in ``a (n - o)`` (only meaningful when :attr:`is_difference`)."""
        return dict(self.coefficients).get("n", Fraction(0))

    @property
    def is_difference_only(self) -> bool:
        """Whether the clause mentions d alone (it needs no labels: Section 4, Observation 2)."""
        return self.variables == ("d",)

    def left_text(self) -> str:
        parts = []
        for i, (var, coef) in enumerate(self.coefficients):
            sign = "-" if coef < 0 else "+"
            mag = abs(coef)
            term = var if mag == 1 else f"{format_number(mag)} * {var}"
            if i == 0:
                parts.append(("-" + term) if sign == "-" else term)
            else:
                parts.append(f"{sign} {term}")
        return " ".join(parts)

    def canonical(self) -> str:
        """The clause in normal form, e.g. ``n - 1.1 * o > 0.01 +/- 0.01``."""
        return self._canonical

    @cached_property
    def _canonical(self) -> str:
        return (f"{self.left_text()} {self.comparison} {format_number(self.threshold)} "
                f"+/- {format_number(self.tolerance)}")

    def __str__(self) -> str:
        return self.canonical()


@dataclass(frozen=True)
class Condition:
    """A parsed condition: the conjunction of its clauses."""

    clauses: tuple
    source: str

    def canonical(self) -> str:
        return " /\\ ".join(c.canonical() for c in self.clauses)

    @property
    def variables(self) -> tuple:
        used = {v for c in self.clauses for v in c.variables}
        return tuple(v for v in VARIABLES if v in used)

    def __len__(self) -> int:
        return len(self.clauses)

    def __iter__(self):
        return iter(self.clauses)

    def __str__(self) -> str:
        return self.canonical()


# ============================================================================ parser
@dataclass
class _Linear:
    """A partial left side: linear coefficients plus a pure constant (for products)."""

    coeffs: dict
    const: Fraction | None  # set only when the value is a pure constant (no variable)
    column: int

    @property
    def is_constant(self) -> bool:
        return self.const is not None

    @property
    def constant(self) -> Fraction:
        """The value of a pure constant (only asked of one: ``is_constant``)."""
        if self.const is None:
            raise TypeError("not a pure constant")
        return self.const


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0
        self.depth = 0

    # -- helpers
    @property
    def tok(self) -> _Token:
        return self.tokens[self.pos]

    def advance(self) -> _Token:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def fail(self, expected: str, tok: _Token | None = None) -> None:
        tok = tok or self.tok
        raise ConditionError(self.text, tok.column, expected, _describe(tok))

    # -- grammar
    def condition(self) -> Condition:
        if self.tok.kind == "END":
            self.fail(f"a clause such as '{EXAMPLE}'")
        clauses = [self.clause()]
        while self.tok.kind == "AND":
            self.advance()
            if len(clauses) == MAX_CLAUSES:
                self.fail(f"the end of the condition (at most {MAX_CLAUSES} clauses)")
            clauses.append(self.clause())
        if self.tok.kind != "END":
            if self.tok.kind in ("NUM", "VAR", "("):
                self.fail("'/\\' before another clause, or the end of the condition")
            self.fail("'/\\' between clauses, or the end of the condition")
        return Condition(tuple(clauses), self.text)

    def clause(self) -> Clause:
        start = self.tok
        left = self.expr()
        if left.is_constant:
            raise ConditionError(self.text, start.column, "a left side that mentions n, o or d",
                                 _quote(self.text[start.column - 1:self.tok.column - 1].strip()))
        coeffs = {v: c for v, c in left.coeffs.items() if c != 0}
        if not coeffs:
            raise ConditionError(self.text, start.column, "a left side that mentions n, o or d (its terms cancel "
                                 "out)", _quote(self.text[start.column - 1:self.tok.column - 1].strip()))
        if self.tok.kind not in (">", "<"):
            self.fail("'>' or '<' after the left side" if self.tok.kind != "NUM"
                      else "an operator (+, -, *) or '>' / '<' after the left side")
        cmp_tok = self.advance()
        threshold = self.signed_number("the threshold (a number) after " + repr(cmp_tok.text))
        if self.tok.kind != "PM":
            self.fail("'+/-' and the error tolerance after the threshold")
        self.advance()
        tol_tok = self.tok
        if tol_tok.kind == "-":
            self.fail("an error tolerance > 0 after '+/-'")
        if tol_tok.kind != "NUM":
            self.fail("the error tolerance (a number > 0) after '+/-'")
        self.advance()
        if tol_tok.number <= 0:
            raise ConditionError(self.text, tol_tok.column, "an error tolerance > 0 after '+/-'", _quote(tol_tok.text))
        end = self.tok.column - 1
        source = self.text[start.column - 1:end].strip()
        ordered = tuple((v, coeffs[v]) for v in VARIABLES if v in coeffs)
        return Clause(ordered, cmp_tok.text, threshold, tol_tok.number, source, start.column)

    def signed_number(self, expected: str) -> Fraction:
        sign = 1
        if self.tok.kind in ("+", "-"):
            sign = -1 if self.advance().kind == "-" else 1
        if self.tok.kind != "NUM":
            self.fail(expected)
        return sign * self.advance().number

    def expr(self) -> _Linear:
        left = self.term()
        while self.tok.kind in ("+", "-"):
            op = self.advance()
            right = self.term()
            for side in (left, right):
                if side.is_constant:
                    raise ConditionError(self.text, side.column, "a variable n, o or d (a constant cannot be added "
                                         "on the left side; move it to the right of '>' / '<')",
                                         _quote(self._constant_text(side)))
            sign = 1 if op.kind == "+" else -1
            coeffs = dict(left.coeffs)
            for v, c in right.coeffs.items():
                coeffs[v] = self.bounded(coeffs.get(v, Fraction(0)) + sign * c, op)
            left = _Linear(coeffs, None, left.column)
        return left

    def _constant_text(self, side: _Linear) -> str:
        return format_number(side.constant)

    def term(self) -> _Linear:
        left = self.unary()
        while self.tok.kind == "*":
            star = self.advance()
            right = self.unary()
            if left.is_constant and right.is_constant:
                value = _Linear({}, self.bounded(left.constant * right.constant, star), left.column)
            elif left.is_constant:
                value = _Linear({v: self.bounded(left.constant * c, star) for v, c in right.coeffs.items()}, None,
                                left.column)
            elif right.is_constant:
                value = _Linear({v: self.bounded(c * right.constant, star) for v, c in left.coeffs.items()}, None,
                                left.column)
            else:
                raise ConditionError(self.text, star.column, "a constant factor ('*' may only multiply by a number; "
                                     "n * o is not linear)", "two variable expressions multiplied")
            left = value
        return left

    def unary(self) -> _Linear:
        """Leading signs, read in a loop (a run of thousands of '-' costs no recursion)."""
        first, negative = None, False
        while self.tok.kind in ("+", "-"):
            op = self.advance()
            first = first or op
            negative ^= op.kind == "-"
        inner = self.primary()
        if first is None:
            return inner
        if not negative:
            return _Linear(inner.coeffs, inner.const, first.column)
        if inner.is_constant:
            return _Linear({}, -inner.constant, first.column)
        return _Linear({v: -c for v, c in inner.coeffs.items()}, None, first.column)

    def bounded(self, value: Fraction, where: _Token) -> Fraction:
        """A coefficient a product or sum created, refused when absurdly large, small or long."""
        size = abs(value)
        if value and (size > _LIMIT or size * _LIMIT < 1 or value.numerator.bit_length() > _MAX_BITS
                      or value.denominator.bit_length() > _MAX_BITS):
            raise ConditionError(self.text, where.column, f"coefficients between 1e-{MAX_EXACT_EXPONENT} and "
                                 f"1e{MAX_EXACT_EXPONENT} in size, of at most 150 digits", _quote(where.text))
        return value

    def primary(self) -> _Linear:
        tok = self.tok
        if tok.kind == "NUM":
            self.advance()
            return _Linear({}, tok.value, tok.column)
        if tok.kind == "VAR":
            self.advance()
            return _Linear({tok.text: Fraction(1)}, None, tok.column)
        if tok.kind == "(":
            if self.depth == MAX_DEPTH:
                self.fail(f"at most {MAX_DEPTH} nested parentheses")
            self.advance()
            self.depth += 1
            inner = self.expr()
            self.depth -= 1
            if self.tok.kind != ")":
                self.fail("')' to close the '(' at column " + str(tok.column))
            self.advance()
            return _Linear(inner.coeffs, inner.const, tok.column)
        self.fail("a variable (n, o or d), a number or '('")
        raise AssertionError  # pragma: no cover


def parse_condition(text) -> Condition:
    """Parse an ease.ml/ci condition such as ``n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01``.

    Parameters
    ----------
    text : str
        The condition (Appendix A.1 grammar).

    Returns
    -------
    Condition
        Its clauses in normal form (exact rational coefficients).

    Raises
    ------
    ConditionError
        With the column of the problem and what was expected there.

    References
    ----------
    Renggli et al. 2019, Appendix A.1 (the grammar) and Section 2.2 (the script's condition).

    Examples
    --------
    >>> c = parse_condition("n - 1.1 * o > 0.01 +/- 0.01 /\\\\ d < 0.1 +/- 0.01")
    >>> [clause.canonical() for clause in c]
    ['n - 1.1 * o > 0.01 +/- 0.01', 'd < 0.1 +/- 0.01']
    """
    if not isinstance(text, str):
        raise InputError("condition", "a text such as " + repr(EXAMPLE), text)
    return _Parser(text).condition()
