//! Lambda parameter lists and comprehension clauses (`visit_arguments`, `visit_arg`,
//! `visit_comprehension`).

use ruff_python_ast::{Comprehension, Parameter, Parameters};

use super::expr::Unparser;
use super::precedence::Precedence;

impl Unparser<'_> {
    /// `visit_comprehension` for each generator.
    pub(super) fn generators(&mut self, generators: &[Comprehension]) {
        for generator in generators {
            self.write(if generator.is_async {
                " async for "
            } else {
                " for "
            });
            self.expr(&generator.target, Precedence::Tuple);
            self.write(" in ");
            self.expr(&generator.iter, Precedence::Test.next());
            for condition in &generator.ifs {
                self.write(" if ");
                self.expr(condition, Precedence::Test.next());
            }
        }
    }

    /// `visit_arg`.
    fn parameter(&mut self, parameter: &Parameter) {
        self.write(parameter.name.as_str());
        if let Some(annotation) = &parameter.annotation {
            self.write(": ");
            self.expr(annotation, Precedence::Test);
        }
    }

    /// `visit_arguments`.
    pub(super) fn parameters(&mut self, parameters: &Parameters) {
        let mut first = true;
        let positional_only = parameters.posonlyargs.len();
        let all = parameters.posonlyargs.iter().chain(parameters.args.iter());
        for (index, item) in all.enumerate() {
            if !first {
                self.write(", ");
            }
            first = false;
            self.parameter(&item.parameter);
            if let Some(default) = &item.default {
                self.write("=");
                self.expr(default, Precedence::Test);
            }
            if index + 1 == positional_only {
                self.write(", /");
            }
        }
        if parameters.vararg.is_some() || !parameters.kwonlyargs.is_empty() {
            if !first {
                self.write(", ");
            }
            first = false;
            self.write("*");
            if let Some(vararg) = &parameters.vararg {
                self.parameter(vararg);
            }
        }
        for item in parameters.kwonlyargs.iter() {
            self.write(", ");
            self.parameter(&item.parameter);
            if let Some(default) = &item.default {
                self.write("=");
                self.expr(default, Precedence::Test);
            }
        }
        if let Some(kwarg) = &parameters.kwarg {
            if !first {
                self.write(", ");
            }
            self.write("**");
            self.parameter(kwarg);
        }
    }
}
