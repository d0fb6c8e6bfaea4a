"""Float literals exactly as MLIR (and so ``tileirdisasm``) prints them.

MLIR's ``printFloatValue`` first tries LLVM's ``APFloat::toString`` with 6
digits in ``%e`` style (``4.471500e-02``); when that text does not read back
to the same value in the type's semantics it prints ``APFloat::toString``'s
default form: ``2 + precision * 59 / 196`` significant digits (9 for f32, 17
for f64, 5 for f16, 4 for bf16), trailing zeros dropped, plain notation when
it needs at most 3 padding zeros, else ``<d>.<digits>E<sign><exp>``
(``0.797884583``, ``9.99999996E-13``, ``1.0000000150474662E+30``).  NaN and
infinities are printed as their bit pattern (``0xFF800000``).

This module ports ``toString``/``toStringImpl``/``AdjustToPrecision`` from
LLVM's ``APFloat.cpp`` digit for digit, including its quirks (a truncating
first pass, then round-half-up on decimal digits), so that the text matches
byte for byte rather than merely reading back to the same value.
"""

from __future__ import annotations

import math
from fractions import Fraction

# name -> (precision in bits including the implicit one, minimum exponent)
SEMANTICS: dict[str, tuple[int, int]] = {
    "f64": (53, -1022),
    "f32": (24, -126),
    "tf32": (11, -126),
    "f16": (11, -14),
    "bf16": (8, -126),
    "f8E4M3FN": (4, -6),
    "f8E5M2": (3, -14),
    "f4E2M1FN": (2, 0),
}


def _adjust_int(significand: int, exp: int, precision: int) -> tuple[int, int]:
    """``AdjustToPrecision(APInt&, ...)``: drop (truncate) whole powers of ten
    that are surely beyond ``precision`` digits."""
    bits = significand.bit_length()
    bits_required = (precision * 196 + 58) // 59
    if bits <= bits_required:
        return significand, exp
    tens = (bits - bits_required) * 59 // 196
    if not tens:
        return significand, exp
    return significand // 10 ** tens, exp + tens


def _adjust_digits(buffer: list[str], exp: int, precision: int) -> tuple[list[str], int]:
    """``AdjustToPrecision(SmallVectorImpl<char>&, ...)``: round the digits
    (least significant first) half-up to ``precision`` and drop trailing zeros."""
    n = len(buffer)
    if n <= precision:
        return buffer, exp
    first = n - precision
    if buffer[first - 1] < "5":
        while first < n and buffer[first] == "0":
            first += 1
        return buffer[first:], exp + first
    buffer = list(buffer)
    for i in range(first, n):
        if buffer[i] == "9":
            first += 1
        else:
            buffer[i] = chr(ord(buffer[i]) + 1)
            break
    if first == n:
        return ["1"], exp + first
    return buffer[first:], exp + first


def _decompose(value: float) -> tuple[int, int]:
    """``value`` (finite, nonzero, sign dropped) as ``m * 2**e`` with ``m`` odd."""
    num, den = Fraction(abs(value)).as_integer_ratio()
    e = -(den.bit_length() - 1)  # den is a power of two
    tz = (num & -num).bit_length() - 1
    return num >> tz, e + tz


def apfloat_to_string(value: float, type_name: str = "f64", format_precision: int = 0,
                      format_max_padding: int = 3, truncate_zero: bool = True) -> str:
    """LLVM's ``APFloat::toString(Str, FormatPrecision, FormatMaxPadding, TruncateZero)``
    for ``value`` (already representable in ``type_name``'s semantics)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "-Inf" if value < 0 else "+Inf"
    out = []
    negative = math.copysign(1.0, value) < 0
    if value == 0:
        if negative:
            out.append("-")
        if not format_max_padding:
            if truncate_zero:
                out.append("0.0E+0")
            else:
                out.append("0.0" + "0" * max(0, format_precision - 1) + "e+00")
        else:
            out.append("0")
        return "".join(out)
    if negative:
        out.append("-")
    precision_bits = SEMANTICS.get(type_name, SEMANTICS["f64"])[0]
    if not format_precision:
        format_precision = 2 + precision_bits * 59 // 196
    significand, exp = _decompose(value)
    if exp > 0:
        significand <<= exp
        exp = 0
    elif exp < 0:
        significand *= 5 ** (-exp)
    significand, exp = _adjust_int(significand, exp, format_precision)
    buffer: list[str] = []  # least significant digit first
    in_trail = True
    while significand:
        significand, d = divmod(significand, 10)
        if in_trail and not d:
            exp += 1
        else:
            buffer.append(chr(48 + d))
            in_trail = False
    buffer, exp = _adjust_digits(buffer, exp, format_precision)
    ndigits = len(buffer)
    if not format_max_padding:
        scientific = True
    elif exp >= 0:
        scientific = exp > format_max_padding or ndigits + exp > format_precision
    else:
        msd = exp + ndigits - 1
        scientific = msd < 0 and -msd > format_max_padding
    if scientific:
        exp += ndigits - 1
        out.append(buffer[-1])
        out.append(".")
        if ndigits == 1 and truncate_zero:
            out.append("0")
        else:
            out.extend(reversed(buffer[:-1]))
        if not truncate_zero and format_precision > ndigits - 1:
            out.append("0" * (format_precision - ndigits + 1))
        out.append("E" if truncate_zero else "e")
        out.append("+" if exp >= 0 else "-")
        digits = str(abs(exp))
        if not truncate_zero and len(digits) < 2:
            digits = "0" + digits
        out.append(digits)
        return "".join(out)
    if exp >= 0:
        out.extend(reversed(buffer))
        out.append("0" * exp)
        return "".join(out)
    whole = exp + ndigits
    digits = "".join(reversed(buffer))
    if whole > 0:
        out.append(digits[:whole] + "." + digits[whole:])
    else:
        out.append("0." + "0" * (-whole) + digits)
    return "".join(out)


def round_to_semantics(x: Fraction, type_name: str) -> Fraction:
    """``x`` rounded to nearest-even in ``type_name``'s semantics (subnormals
    included, no overflow handling: the texts checked are near finite values)."""
    if x == 0:
        return x
    p, emin = SEMANTICS.get(type_name, SEMANTICS["f64"])
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)
    quantum = Fraction(2) ** (e - p + 1)
    r = round(a / quantum) * quantum
    return r if x > 0 else -r


def _reads_back(text: str, value: float, type_name: str) -> bool:
    """Does decimal ``text`` parse (``APFloat(sem, text)``) to exactly ``value``, sign included?"""
    parsed = round_to_semantics(Fraction(text), type_name)
    if parsed == 0 and value == 0:
        return text.startswith("-") == (math.copysign(1.0, value) < 0)
    return parsed == Fraction(value)


def float_bits(value: float, type_name: str) -> tuple[int, int]:
    """(bit pattern, width in bits) of ``value`` in ``type_name`` (f64/f32/f16/bf16)."""
    import struct

    if type_name == "f64":
        return struct.unpack("<Q", struct.pack("<d", value))[0], 64
    if type_name == "f16":
        return struct.unpack("<H", struct.pack("<e", value))[0], 16
    bits32 = struct.unpack("<I", struct.pack("<f", value))[0]
    if type_name == "bf16":
        return bits32 >> 16, 16
    return bits32, 32


def mlir_float_text(value: float, type_name: str = "f64") -> str:
    """MLIR's ``printFloatValue`` for ``value`` (representable in ``type_name``):
    ``%e``-style 6 digits when exact, else ``APFloat::toString``'s default
    form, else (NaN, infinities) the bits as ``0x...`` in uppercase hex."""
    if math.isfinite(value):
        text = apfloat_to_string(value, type_name, 6, 0, False)
        if _reads_back(text, value, type_name):
            return text
        text = apfloat_to_string(value, type_name)
        if "." in text:
            return text
    bits, width = float_bits(value, type_name)
    return "0x" + format(bits, "X").rjust(max(1, width // 4), "0")
