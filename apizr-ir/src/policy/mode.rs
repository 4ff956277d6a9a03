//! The typed `mode` of each policy section (`{"mode": …}`), shared by policies v1 and v2.
//!
//! Why types and not strings: a control is decided by matching a mode, and a misspelt string
//! comparison (`== "deny "`) silently means "not requested". With an enum the compiler checks
//! every match, and the wire literal exists once, in [`Mode::wire_name`].

use serde::{Serialize, Serializer};

/// A section mode: a closed set of wire literals.
pub trait Mode: Copy + Eq + Sized + 'static {
    /// Every mode, in the order the error messages list them.
    const ALL: &'static [Self];

    /// The exact wire literal.
    fn wire_name(self) -> &'static str;

    /// Parse a wire literal.
    fn from_wire(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|m| m.wire_name() == name)
    }

    /// The wire literals, in [`Mode::ALL`] order (for error messages).
    fn wire_names() -> Vec<&'static str> {
        Self::ALL.iter().map(|m| m.wire_name()).collect()
    }
}

macro_rules! modes {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $wire:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl Mode for $name {
            const ALL: &'static [Self] = &[$($name::$variant),+];

            fn wire_name(self) -> &'static str {
                match self {
                    $($name::$variant => $wire),+
                }
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.wire_name())
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.wire_name())
            }
        }
    };
}

modes! {
    /// `network.mode`.
    NetworkMode {
        /// The host's network (v1 default).
        Inherit => "inherit",
        /// No network at all (v2 default).
        Deny => "deny",
    }
}

modes! {
    /// `filesystem.mode` (v1; v2's `filesystem` is always the string `"container"`).
    FilesystemMode {
        /// The host's filesystem (v1 default).
        Host => "host",
        /// Read-only host, writable fresh workdir.
        Sandbox => "sandbox",
    }
}

modes! {
    /// `subprocess.mode`.
    SubprocessMode {
        /// Processes may start others (default).
        Allow => "allow",
        /// No new processes (threads keep working).
        Deny => "deny",
    }
}

/// A `{"mode": …}` section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ModePolicy<M: Mode + Serialize> {
    pub mode: M,
}

impl<M: Mode + Serialize> ModePolicy<M> {
    pub const fn new(mode: M) -> Self {
        ModePolicy { mode }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip() {
        for m in NetworkMode::ALL {
            assert_eq!(NetworkMode::from_wire(m.wire_name()), Some(*m));
        }
        assert_eq!(FilesystemMode::wire_names(), ["host", "sandbox"]);
        assert_eq!(
            SubprocessMode::from_wire("deny"),
            Some(SubprocessMode::Deny)
        );
        assert_eq!(SubprocessMode::from_wire("Deny"), None);
        assert_eq!(
            crate::json::canonical_bytes(&ModePolicy::new(NetworkMode::Deny)).unwrap(),
            b"{\"mode\":\"deny\"}\n"
        );
    }
}
