//! Secrets: a string that must never be printed ([`Secret`]). Redacting the secrets that
//! others wrote into text `rewind` keeps or shows is `crate::redact`'s.

use std::fmt;

/// Holds a secret. `Debug` and `Display` print a placeholder; only [`Secret::expose`] reveals it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for the one place that sends it over the wire.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

#[cfg(test)]
mod tests {
    use super::Secret;

    #[test]
    fn never_formats_the_value() {
        let s = Secret::new("hunter2");
        assert!(!format!("{s:?} {s} {s:#?}").contains("hunter2"));
        assert_eq!(s.expose(), "hunter2");
    }
}
