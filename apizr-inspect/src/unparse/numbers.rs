//! Numeric literals as CPython prints their *values*: `ast.unparse` writes `repr(value)`, so
//! `0x1F` becomes `31`, `1_000` becomes `1000` and `1e3` becomes `1000.0`.
//!
//! ruff keeps integers that do not fit in a `u64` as their token text (`0xFFFF_FFFF_...`), so
//! a small arbitrary-precision base conversion lives here. CPython refuses to print integers
//! with more than 4300 decimal digits (`sys.get_int_max_str_digits()`); that case is an error.

use apizr_ir::json::python_float_repr;
use ruff_python_ast::{Expr, Int, Number};

use super::UnparseError;

/// `ast._INFSTR`: `"1e" + repr(sys.float_info.max_10_exp + 1)`.
pub(crate) const INFSTR: &str = "1e309";

/// CPython's default `sys.get_int_max_str_digits()`.
const MAX_STR_DIGITS: usize = 4300;

/// `repr(value)` for a numeric constant, with infinities replaced by [`INFSTR`].
pub(crate) fn number_text(number: &Number) -> Result<String, UnparseError> {
    match number {
        Number::Int(int) => int_text(int),
        Number::Float(value) => Ok(float_text(*value)),
        Number::Complex { real, imag } => Ok(complex_text(*real, *imag)),
    }
}

fn float_text(value: f64) -> String {
    if value.is_nan() {
        // repr gives "nan", which ast.py replaces by "(1e309-1e309)".
        return format!("({INFSTR}-{INFSTR})");
    }
    if value.is_infinite() {
        return if value < 0.0 {
            format!("-{INFSTR}")
        } else {
            INFSTR.to_owned()
        };
    }
    python_float_repr(value).unwrap_or_else(|_| INFSTR.to_owned())
}

/// `repr(complex)`: a literal like `2j` always has a positive zero real part, which repr
/// omits; the imaginary part uses `repr` formatting without the forced `.0`.
fn complex_text(real: f64, imag: f64) -> String {
    let imag_text = without_dot_zero(float_text(imag));
    if real == 0.0 && real.is_sign_positive() {
        return format!("{imag_text}j");
    }
    let real_text = without_dot_zero(float_text(real));
    let sign = if imag_text.starts_with('-') { "" } else { "+" };
    format!("({real_text}{sign}{imag_text}j)")
}

/// Complex repr formats its parts without the `.0` that float repr forces.
fn without_dot_zero(text: String) -> String {
    match text.strip_suffix(".0") {
        Some(stripped) => stripped.to_owned(),
        None => text,
    }
}

fn int_text(int: &Int) -> Result<String, UnparseError> {
    if let Some(value) = int.as_u64() {
        return Ok(value.to_string());
    }
    // Big integers keep their token text: decimal digits (underscores already removed) or a
    // `0x` / `0o` / `0b` literal with its underscores.
    let token = int.to_string();
    let lower = token.to_ascii_lowercase();
    let (radix, digits) = if let Some(hex) = lower.strip_prefix("0x") {
        (16, hex)
    } else if let Some(octal) = lower.strip_prefix("0o") {
        (8, octal)
    } else if let Some(binary) = lower.strip_prefix("0b") {
        (2, binary)
    } else {
        (10, lower.as_str())
    };
    let decimal = to_decimal(digits, radix)?;
    if decimal.len() > MAX_STR_DIGITS {
        return Err(UnparseError::IntegerTooLarge {
            digits: decimal.len(),
        });
    }
    Ok(decimal)
}

/// Convert digits in `radix` (underscores ignored) to a decimal string.
fn to_decimal(digits: &str, radix: u32) -> Result<String, UnparseError> {
    let values: Vec<u32> = digits
        .chars()
        .filter(|c| *c != '_')
        .map(|c| c.to_digit(radix).ok_or(UnparseError::BadIntegerLiteral))
        .collect::<Result<_, _>>()?;
    let significant = values.iter().skip_while(|d| **d == 0).count();
    // Lower bound on the decimal length; refuse before doing quadratic work on huge literals.
    let min_decimal_digits = (significant.saturating_sub(1) as f64) * f64::from(radix).log10();
    if min_decimal_digits > MAX_STR_DIGITS as f64 {
        return Err(UnparseError::IntegerTooLarge {
            digits: min_decimal_digits as usize + 1,
        });
    }
    // Little-endian limbs in base 10^9.
    const BASE: u64 = 1_000_000_000;
    let mut limbs: Vec<u32> = Vec::new();
    for digit in values {
        let mut carry = u64::from(digit);
        for limb in &mut limbs {
            let acc = u64::from(*limb) * u64::from(radix) + carry;
            *limb = (acc % BASE) as u32;
            carry = acc / BASE;
        }
        while carry > 0 {
            limbs.push((carry % BASE) as u32);
            carry /= BASE;
        }
    }
    let mut out = String::new();
    match limbs.split_last() {
        None => out.push('0'),
        Some((top, rest)) => {
            out.push_str(&top.to_string());
            for limb in rest.iter().rev() {
                out.push_str(&format!("{limb:09}"));
            }
        }
    }
    Ok(out)
}

/// An `int` constant (or a `bool`, which is one): `1 .real` needs the space.
pub(super) fn is_int_constant(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(node) => matches!(node.value, Number::Int(_)),
        Expr::BooleanLiteral(_) => true,
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn base_conversion() {
        assert_eq!(to_decimal("ff_ff", 16).unwrap(), "65535");
        assert_eq!(to_decimal("0000", 16).unwrap(), "0");
        assert_eq!(
            to_decimal("1_0000_0000_0000_0000", 16).unwrap(),
            "18446744073709551616"
        );
        assert_eq!(to_decimal("777", 8).unwrap(), "511");
        assert_eq!(to_decimal("1010", 2).unwrap(), "10");
        assert!(to_decimal("f".repeat(4000).as_str(), 16).is_err());
    }

    #[test]
    fn floats_and_complex() {
        assert_eq!(float_text(1e3), "1000.0");
        assert_eq!(float_text(f64::INFINITY), "1e309");
        assert_eq!(complex_text(0.0, 1.0), "1j");
        assert_eq!(complex_text(0.0, 1.5), "1.5j");
        assert_eq!(complex_text(0.0, 1e16), "1e+16j");
        assert_eq!(complex_text(0.0, f64::INFINITY), "1e309j");
        assert_eq!(complex_text(1.0, 2.0), "(1+2j)");
    }
}
