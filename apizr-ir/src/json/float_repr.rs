//! CPython `repr(float)`: shortest round-trip digits, exponent form when the decimal exponent is
//! below -4 or at least 16, exponent written with a sign and at least two digits.

use super::CanonicalError;

/// Format a finite float exactly like CPython's `repr`.
pub fn python_float_repr(value: f64) -> Result<String, CanonicalError> {
    if !value.is_finite() {
        return Err(CanonicalError::NonFinite(format!("{value}")));
    }
    // Rust's `{:e}` yields the shortest round-trip digits, e.g. `1.5e300`, `-1e-7`, `0e0`.
    let sci = format!("{value:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::with_capacity(digits.len() + 8);
    out.push_str(sign);
    if (-4..16).contains(&exponent) {
        if exponent < 0 {
            out.push_str("0.");
            for _ in 0..(-exponent - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        } else {
            let point = exponent as usize + 1;
            if digits.len() <= point {
                out.push_str(&digits);
                for _ in digits.len()..point {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exponent < 0 { '-' } else { '+' });
        let magnitude = exponent.unsigned_abs();
        if magnitude < 10 {
            out.push('0');
        }
        out.push_str(&magnitude.to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contract_vectors() {
        let cases: &[(f64, &str)] = &[
            (1e-05, "1e-05"),
            (1e-07, "1e-07"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1e100, "1e+100"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (36.0, "36.0"),
            (0.2, "0.2"),
            (0.0001, "0.0001"),
            (1e15, "1000000000000000.0"),
            (123456789012345680.0, "1.2345678901234568e+17"),
            (1.5e300, "1.5e+300"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-2.5, "-2.5"),
            (1234.5678, "1234.5678"),
            (1e-4, "0.0001"),
            (1.25e-5, "1.25e-05"),
        ];
        for (value, expected) in cases {
            assert_eq!(python_float_repr(*value).unwrap(), *expected, "{value:?}");
        }
    }

    #[test]
    fn refuses_non_finite() {
        assert!(python_float_repr(f64::NAN).is_err());
        assert!(python_float_repr(f64::NEG_INFINITY).is_err());
    }
}
