//! Optional colour for human-readable output.
//!
//! Colour is a decoration only: every report reads the same without it. It is on only when the
//! stream is a terminal and `NO_COLOR` is unset or empty (<https://no-color.org>), so pipes,
//! files and tests always get plain text.

use std::io::IsTerminal;

use apizr_ir::ReadinessState;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    enabled: bool,
}

impl Style {
    pub const PLAIN: Style = Style { enabled: false };

    /// Colour for stdout, if it is a terminal and the user did not opt out.
    pub fn for_stdout() -> Self {
        Style::detect(std::io::stdout().is_terminal())
    }

    /// Colour for stderr, if it is a terminal and the user did not opt out.
    pub fn for_stderr() -> Self {
        Style::detect(std::io::stderr().is_terminal())
    }

    fn detect(is_terminal: bool) -> Self {
        if is_terminal && colour_allowed() {
            Style { enabled: true }
        } else {
            Style::PLAIN
        }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.enabled {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }

    pub fn error(self, text: &str) -> String {
        self.paint("1;31", text)
    }

    pub fn warning(self, text: &str) -> String {
        self.paint("1;33", text)
    }

    /// Green for ready, cyan for conditional, red for unsupported, magenta for ambiguous.
    pub fn state(self, state: ReadinessState, text: &str) -> String {
        let code = match state {
            ReadinessState::Ready => "32",
            ReadinessState::Conditional => "36",
            ReadinessState::Unsupported => "31",
            ReadinessState::Ambiguous => "35",
        };
        self.paint(code, text)
    }
}

fn colour_allowed() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
}
