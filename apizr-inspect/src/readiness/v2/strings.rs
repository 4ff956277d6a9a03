//! Strings v2 knows the value of at import: literals, names bound to them ([`super::env::Env`]
//! keeps the value while the binding is the same on every path), `+` of two such strings, and
//! `%`-formatting whose format only holds `%s` and `%%` with exactly as many known strings as
//! arguments (`"%s" % "x"` cannot fail then, and gives a known string).
//! Also `s * n` for an int literal `n` up to [`MAX_REPEAT`], and the str methods of
//! [`super::methods`] (`join`, `format`, ...).
//!
//! Used to prove `re.compile(PREFIX + "%s" % r"([0-9]+)")` like a literal pattern, and
//! `"2014 %s" % __author__` harmless (a `%` whose operands v2 does not know may raise
//! `TypeError`/`ValueError`).

use ruff_python_ast::{
    ConversionFlag, Expr, ExprBinOp, FStringPart, InterpolatedStringElement, Operator,
};

use super::Prover;
use super::env::{Kind, Meaning};

impl Prover<'_> {
    /// The value of `expr` when it is a string v2 folds.
    pub fn str_value(&self, expr: &Expr) -> Option<String> {
        match expr {
            Expr::StringLiteral(s) => Some(s.value.to_str().to_string()),
            Expr::Name(n) => self.env.string(n.id.as_str()).map(str::to_string),
            Expr::BinOp(b) => self.str_binop(b),
            // `string.digits`: the module the name is bound to, not the text written.
            // A proved module of the package: the string it folded ([`super::package`]).
            Expr::Attribute(a) => match self.value(&a.value) {
                Ok(Meaning::Module(module)) => match self.package_export(&module, a) {
                    Some(export) => export.string,
                    None => {
                        stdlib_string(&format!("{module}.{}", a.attr.as_str())).map(str::to_string)
                    }
                },
                _ => None,
            },
            // `re.escape(<known string>)`: pure, and what it escapes is fixed (Python 3.7+).
            Expr::Call(call)
                if call.arguments.keywords.is_empty()
                    && matches!(call.func.as_ref(), Expr::Attribute(f) if f.attr.as_str() == "escape"
                        && self.value(&f.value) == Ok(Meaning::Module("re".into()))) =>
            {
                match &call.arguments.args[..] {
                    [arg] => Some(re_escape(&self.str_value(arg)?)),
                    _ => None,
                }
            }
            // `", ".join(...)`, `"{}".format(...)`, ... ([`super::methods`]); `bytes(...).decode()`
            // ([`super::octets`]).
            Expr::Call(call) => self.str_method(call).or_else(|| self.decoded_bytes(call)),
            Expr::FString(f) => {
                let mut out = String::new();
                for part in f.value.iter() {
                    match part {
                        FStringPart::Literal(s) => out.push_str(&s.value),
                        FStringPart::FString(f) => {
                            for element in f.elements.iter() {
                                match element {
                                    InterpolatedStringElement::Literal(l) => out.push_str(&l.value),
                                    // `{name}` of a known string (no conversion but `!s`, no
                                    // format spec, no `=`): formatting a str gives itself.
                                    InterpolatedStringElement::Interpolation(i)
                                        if i.debug_text.is_none()
                                            && i.format_spec.is_none()
                                            && matches!(
                                                i.conversion,
                                                ConversionFlag::None | ConversionFlag::Str
                                            ) =>
                                    {
                                        out.push_str(&self.str_value(&i.expression)?);
                                    }
                                    // `{ord(c):02X}`: an int v2 knows, a literal int spec
                                    // ([`super::joins`]).
                                    InterpolatedStringElement::Interpolation(i)
                                        if i.debug_text.is_none()
                                            && i.conversion == ConversionFlag::None =>
                                    {
                                        let spec =
                                            super::joins::literal_spec(i.format_spec.as_deref()?)?;
                                        let value = self.int_value(&i.expression)?;
                                        out.push_str(&super::joins::format_int(value, &spec)?);
                                    }
                                    InterpolatedStringElement::Interpolation(_) => return None,
                                }
                            }
                        }
                    }
                }
                Some(out)
            }
            _ => None,
        }
    }

    /// An f-string whose every field formats a str, int, float, bool or `None` value v2
    /// proves, with no format spec (`!s`/`!r`/`!a` and `=` allowed): `format(v, "")` of these
    /// builtin kinds is `str(v)` and cannot raise. The text is not folded (`f"COM{i}"` over
    /// `range(10)`).
    pub fn formats_builtin_scalars(&self, f: &ruff_python_ast::ExprFString) -> bool {
        f.value.iter().all(|part| match part {
            FStringPart::Literal(_) => true,
            FStringPart::FString(f) => f.elements.iter().all(|element| match element {
                InterpolatedStringElement::Literal(_) => true,
                // `{c:02x}` of an int: `format(int, spec)` with a spec `[0][width][d|x|X|o|b]`
                // ([`super::joins::format_int`] accepts it) cannot fail; not after a `!r`
                // conversion (a str refuses an int spec).
                InterpolatedStringElement::Interpolation(i) if i.format_spec.is_some() => {
                    i.conversion == ruff_python_ast::ConversionFlag::None
                        && i.format_spec
                            .as_deref()
                            .and_then(super::joins::literal_spec)
                            .is_some_and(|spec| super::joins::format_int(0, &spec).is_some())
                        && self.value(&i.expression) == Ok(Meaning::Value(Kind::Int))
                }
                InterpolatedStringElement::Interpolation(i) => {
                    i.format_spec.is_none()
                        && matches!(
                            self.value(&i.expression),
                            Ok(Meaning::Value(
                                Kind::Str | Kind::Int | Kind::Float | Kind::Bool | Kind::None
                            ))
                        )
                }
            }),
        })
    }

    /// The items of a tuple or list of strings v2 folds: a display, or a name bound to a tuple
    /// display here or in a proved module of the package.
    pub fn str_sequence(&self, expr: &Expr) -> Option<Vec<String>> {
        match expr {
            Expr::List(l) => self.known_strings(&l.elts),
            Expr::Tuple(t) => self.known_strings(&t.elts),
            Expr::Name(n) => self.env.sequence(n.id.as_str()).map(<[String]>::to_vec),
            // `(f"{ord(c):02X}" for c in sorted(chars))` ([`super::joins`]).
            Expr::Generator(g) => self.folded_generator(g),
            Expr::Attribute(a) => match self.value(&a.value) {
                Ok(Meaning::Module(module)) => self.package_export(&module, a)?.strings,
                _ => None,
            },
            _ => None,
        }
    }

    fn known_strings(&self, items: &[Expr]) -> Option<Vec<String>> {
        items.iter().map(|e| self.str_value(e)).collect()
    }

    fn package_export(
        &self,
        module: &str,
        attr: &ruff_python_ast::ExprAttribute,
    ) -> Option<super::package::Export> {
        self.package?.attribute(module, attr.attr.as_str())
    }

    /// Bind `name` to the value of `value` (`meaning`), keeping its string, or the items of a
    /// tuple display of strings, when v2 folds them.
    pub fn bind_value(&mut self, name: &str, value: &Expr, meaning: Meaning) {
        let tuple = meaning == Meaning::Value(Kind::Tuple);
        let dict = meaning == Meaning::Value(Kind::Dict);
        match (self.str_value(value), value) {
            (Some(folded), _) => self.env.bind_str(name, folded),
            (None, Expr::Tuple(_)) if meaning == Meaning::Value(Kind::Tuple) => {
                match self.str_sequence(value) {
                    Some(items) => self.env.bind_sequence(name, items),
                    None => self.env.bind(name, meaning),
                }
            }
            (None, _) => self.env.bind(name, meaning),
        }
        if let Expr::Call(call) = value
            && self.value(&call.func) == Ok(Meaning::Qualified("struct.Struct".into()))
        {
            self.env.mark(name, super::env::Mark::Struct);
        }
        if let Some(fixed) = super::fixed::fixed(value, self) {
            self.env.mark(name, super::env::Mark::Fixed(fixed));
        }
        // `__version_info__ = (3, 6, 0, "final", 0)`: its exact value ([`super::constant`]).
        if let Some(constant) = super::constant::Value::of_literal(value) {
            self.env.bind_constant(name, constant);
        }
        if let Expr::List(list) = value
            && list.elts.iter().all(|e| self.is_hashable_element(e))
        {
            self.env.mark(name, super::env::Mark::HashableItems);
        }
        // `D = {...}`: a dict only this module built ([`super::dicts`]).
        if dict && self.builds_dict(value) {
            self.env.mark(name, super::env::Mark::FreshDict);
        }
        // `py = sys.version_info`: ordered comparisons of ints (tuples cannot change).
        if tuple && self.is_int_tuple(value) {
            self.env.mark(name, super::env::Mark::IntTuple);
        }
        // `spec = importlib.util.find_spec(...)`, `m = importlib.util.module_from_spec(spec)`.
        self.mark_module_copy(name, value);
    }

    /// `a + b` or `format % args` of known strings.
    pub fn str_binop(&self, b: &ExprBinOp) -> Option<String> {
        match b.op {
            Operator::Add => Some(self.str_value(&b.left)? + &self.str_value(&b.right)?),
            Operator::Mult => {
                let (text, count) = match (repeat_count(&b.left), repeat_count(&b.right)) {
                    (None, Some(n)) => (self.str_value(&b.left)?, n),
                    (Some(n), None) => (self.str_value(&b.right)?, n),
                    _ => return None,
                };
                Some(text.repeat(count))
            }
            Operator::Mod => {
                let format = self.str_value(&b.left)?;
                let args = match b.right.as_ref() {
                    Expr::Tuple(t) => t
                        .elts
                        .iter()
                        .map(|e| self.str_value(e))
                        .collect::<Option<Vec<_>>>()?,
                    other => vec![self.str_value(other)?],
                };
                percent_format(&format, &args)
            }
            _ => None,
        }
    }
}

/// The largest int literal v2 lets repeat a str, bytes, list or tuple at import (`"-" * 72`,
/// `[1] * 31`): the result stays a small multiple of the module's own text, so the repetition
/// cannot exhaust memory (`MemoryError`); a name bound to an int could be any size.
pub const MAX_REPEAT: usize = 4096;

/// `n` in `x * n`: a non-negative int literal up to [`MAX_REPEAT`].
pub fn repeat_count(expr: &Expr) -> Option<usize> {
    match expr {
        Expr::NumberLiteral(n) => match &n.value {
            ruff_python_ast::Number::Int(i) => i.as_usize().filter(|n| *n <= MAX_REPEAT),
            _ => None,
        },
        _ => None,
    }
}

/// `re.escape` since Python 3.7: a backslash before each of `()[]{}?*+-|^$\\.&~#`, space and
/// `\t\n\r\v\f`; every other character as it is.
fn re_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "()[]{}?*+-|^$\\.&~# \t\n\r\x0b\x0c".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The string constants of the `string` module, by qualified name.
pub fn stdlib_string(qualified: &str) -> Option<&'static str> {
    Some(match qualified {
        "string.ascii_lowercase" => "abcdefghijklmnopqrstuvwxyz",
        "string.ascii_uppercase" => "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "string.ascii_letters" => "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "string.digits" => "0123456789",
        "string.hexdigits" => "0123456789abcdefABCDEF",
        "string.octdigits" => "01234567",
        "string.punctuation" => r##"!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~"##,
        _ => return None,
    })
}

/// `format % args` when the format holds only `%s` (one per argument) and `%%`.
pub fn percent_format(format: &str, args: &[String]) -> Option<String> {
    let mut out = String::with_capacity(format.len());
    let mut args = args.iter();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            '%' => out.push('%'),
            's' => out.push_str(args.next()?),
            _ => return None,
        }
    }
    // Python raises "not all arguments converted" when some are left.
    args.next().is_none().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::percent_format;

    #[test]
    fn only_s_and_percent_with_exact_arguments() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            percent_format("a%sb%%", &args(&["x"])).as_deref(),
            Some("axb%")
        );
        assert_eq!(percent_format("%s%s", &args(&["x"])), None);
        assert_eq!(percent_format("%s", &args(&["x", "y"])), None);
        assert_eq!(percent_format("%d", &args(&["1"])), None);
        assert_eq!(percent_format("%(k)s", &args(&["1"])), None);
        assert_eq!(percent_format("50%", &args(&[])), None);
    }
}
