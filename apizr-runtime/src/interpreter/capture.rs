//! Bounded output capture and mellea's truncation rule.
//!
//! The host never holds more than a bound per stream, whatever the code prints: the head is
//! kept (up to the policy's budget plus slack, or [`CEILING_BYTES`] without a budget) and the
//! rest is read and counted, so the pipe never blocks the code. The text then follows mellea:
//! decoded (invalid UTF-8 replaced), stripped, and — past the budget — cut to
//! `budget - 15` bytes plus `"... [truncated]"` (the total stays within the budget; a budget of
//! 15 bytes or less is a raw cut without marker).

use std::io::Read;

/// mellea's marker.
pub const MARKER: &str = "... [truncated]";
/// What the host keeps per stream when the policy sets no budget.
pub const CEILING_BYTES: u64 = 8 * 1024 * 1024;
/// Kept beyond a budget, so that stripping whitespace sees the same text mellea's would.
const SLACK_BYTES: u64 = 64 * 1024;

/// The head of a stream and how much it produced in all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    pub head: Vec<u8>,
    pub total: u64,
}

impl Captured {
    /// Append `data`, keeping at most `keep` bytes.
    pub fn push(&mut self, data: &[u8], keep: u64) {
        self.total = self.total.saturating_add(data.len() as u64);
        let room = usize::try_from(keep.saturating_sub(self.head.len() as u64)).unwrap_or(0);
        let take = data.len().min(room);
        self.head
            .extend_from_slice(data.get(..take).unwrap_or_default());
    }
}

/// How many bytes to keep for a stream with this budget.
pub fn keep_for(budget: Option<u64>) -> u64 {
    budget.map_or(CEILING_BYTES, |b| {
        b.saturating_add(SLACK_BYTES).min(CEILING_BYTES.max(b))
    })
}

/// Read `reader` to EOF, keeping `keep` bytes.
pub fn drain(mut reader: impl Read, keep: u64) -> Captured {
    let mut out = Captured::default();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => out.push(chunk.get(..n).unwrap_or_default(), keep),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    out
}

/// The text of a stream and whether it was truncated (by the budget, or because the host
/// kept only a head).
pub fn render(captured: &Captured, budget: Option<u64>) -> (String, bool) {
    let text = String::from_utf8_lossy(&captured.head);
    let stripped = text.trim();
    let clipped = captured.total > captured.head.len() as u64;
    let Some(budget) = budget else {
        return (stripped.to_string(), clipped);
    };
    let budget = usize::try_from(budget).unwrap_or(usize::MAX);
    if stripped.len() <= budget && !clipped {
        return (stripped.to_string(), false);
    }
    let marker = MARKER.len();
    if budget <= marker {
        return (prefix(stripped, budget).to_string(), true);
    }
    (
        format!("{}{MARKER}", prefix(stripped, budget - marker)),
        true,
    )
}

/// The longest prefix of `s` of at most `n` bytes that ends on a character boundary.
fn prefix(s: &str, n: usize) -> &str {
    let mut end = n.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(data: &[u8], keep: u64) -> Captured {
        let mut c = Captured::default();
        for chunk in data.chunks(7) {
            c.push(chunk, keep);
        }
        c
    }

    #[test]
    fn mellea_truncation_stays_within_the_budget() {
        let c = captured(&[b'a'; 100], keep_for(Some(30)));
        let (text, truncated) = render(&c, Some(30));
        assert!(truncated);
        assert!(text.ends_with(MARKER));
        assert!(text.len() <= 30);
        assert_eq!(text, format!("{}{MARKER}", "a".repeat(15)));
        // A budget no larger than the marker: a raw cut, no marker.
        let (text, _) = render(&c, Some(10));
        assert_eq!(text, "a".repeat(10));
        // Fits: returned as is, stripped.
        let (text, truncated) = render(&captured(b"  2\n", keep_for(Some(30))), Some(30));
        assert_eq!((text.as_str(), truncated), ("2", false));
    }

    #[test]
    fn split_code_points_are_dropped_and_the_host_keeps_only_a_head() {
        let data = "é".repeat(40);
        let (text, _) = render(&captured(data.as_bytes(), keep_for(Some(20))), Some(20));
        assert_eq!(text, format!("{}{MARKER}", "é".repeat(2)));
        let c = captured(&[b'x'; 1000], 100);
        assert_eq!((c.head.len(), c.total), (100, 1000));
        let (text, truncated) = render(&c, None);
        assert_eq!((text.len(), truncated), (100, true));
        assert_eq!(keep_for(None), CEILING_BYTES);
    }
}
