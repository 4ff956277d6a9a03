//! Spanned errors, collected so that the user sees every problem of an item in one compile
//! (PyO3's `combine_errors`): each pass pushes what it finds and carries on where it can.

use proc_macro2::Span;

/// `syn::Error::new(span, format!(...))`.
#[macro_export]
#[doc(hidden)]
macro_rules! err_spanned {
    ($span:expr => $($fmt:tt)*) => {
        ::syn::Error::new($span, ::std::format!($($fmt)*))
    };
}

/// Errors gathered over one item.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn new() -> Self {
        Errors(None)
    }

    pub fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub fn spanned(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Keep the value of a result, or record its error.
    pub fn take<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                self.push(error);
                None
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// `Err` with every recorded error (for a caller that cannot go on).
    pub fn fail<T>(self) -> syn::Result<T> {
        Err(self
            .0
            .unwrap_or_else(|| syn::Error::new(Span::call_site(), "the item could not be checked")))
    }

    /// `Err` with every recorded error, or `Ok(value)`.
    pub fn finish<T>(self, value: T) -> syn::Result<T> {
        match self.0 {
            Some(error) => Err(error),
            None => Ok(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combines_in_order() {
        let mut errors = Errors::new();
        assert!(errors.is_empty());
        errors.spanned(Span::call_site(), "first");
        errors.push(err_spanned!(Span::call_site() => "second {}", 2));
        let combined = errors.finish(()).unwrap_err();
        let messages: Vec<String> = combined.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(messages, ["first", "second 2"]);
    }
}
