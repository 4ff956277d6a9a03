//! The project document (`apizr.project-inspection/v1`) and the project digest.
//!
//! The document is written by concatenation instead of being built as one [`apizr_ir::Value`]:
//! each module's envelope is already canonical bytes, and canonical JSON is compositional, so
//! splicing them in keeps the whole document canonical (sorted keys, compact separators, one
//! trailing newline) without holding a second, larger copy of every module in memory.
//!
//! ```text
//! {"modules":[ENTRY,...],"project_digest":DIGEST,"schema_version":"apizr.project-inspection/v1",
//!  "summary":{"assessments":{"ambiguous":N,"conditional":N,"ready":N,"unsupported":N},
//!             "capabilities":N,"diagnostics":{"error":N,"info":N,"warning":N},
//!             "failed":N,"inspected":N,"modules":N,"needing_attention":N}}
//! ENTRY = {"inspection":ENVELOPE,"module":NAME,"path":PATH}
//!       | {"error":{"column":N|null,"kind":KIND,"line":N|null,"message":TEXT},"module":NAME|null,"path":PATH}
//! ```
//!
//! **Project digest.** sha256 of the canonical bytes (trailing newline included) of the array
//! `[{"ir_digest":DIGEST,"module":NAME,"readiness_digest":DIGEST}, ...]` with one element per
//! successfully inspected module, sorted by (`module`, `ir_digest.value`,
//! `readiness_digest.value`) in code-point order. Paths and failed entries do not take part: the
//! digest identifies what the project offers, like `ir_digest` identifies one module, and it
//! is unchanged when the tree is moved or checked out elsewhere.

use std::io::{self, Write};

use apizr_ir::json::write_string;
use apizr_ir::{Digest, Value};
use serde::Serialize;

use super::{ModuleEntry, ProjectInspection, Summary};

pub const PROJECT_SCHEMA: &str = "apizr.project-inspection/v1";

#[derive(Serialize)]
struct DigestItem<'a> {
    ir_digest: &'a Digest,
    module: &'a str,
    readiness_digest: &'a Digest,
}

/// The project digest over the inspected entries (see the module docs for the definition).
pub fn project_digest(entries: &[ModuleEntry]) -> Digest {
    let mut items: Vec<DigestItem<'_>> = entries
        .iter()
        .filter_map(|entry| match (&entry.result, &entry.module) {
            (Ok(report), Some(module)) => Some(DigestItem {
                ir_digest: &report.ir_digest,
                module,
                readiness_digest: &report.readiness_digest,
            }),
            _ => None,
        })
        .collect();
    items.sort_by(|a, b| {
        (a.module, &a.ir_digest.value, &a.readiness_digest.value).cmp(&(
            b.module,
            &b.ir_digest.value,
            &b.readiness_digest.value,
        ))
    });
    let mut text = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str("{\"ir_digest\":");
        push_digest(&mut text, item.ir_digest);
        text.push_str(",\"module\":");
        write_string(&mut text, item.module);
        text.push_str(",\"readiness_digest\":");
        push_digest(&mut text, item.readiness_digest);
        text.push('}');
    }
    text.push_str("]\n");
    Digest::sha256(text.as_bytes())
}

fn push_digest(out: &mut String, digest: &Digest) {
    out.push_str("{\"algorithm\":");
    write_string(out, digest.algorithm);
    out.push_str(",\"value\":");
    write_string(out, &digest.value);
    out.push('}');
}

impl ProjectInspection {
    /// Write the canonical project document (with its trailing newline).
    pub fn write_canonical(&self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(b"{\"modules\":[")?;
        for (i, entry) in self.modules.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            write_entry(out, entry)?;
        }
        let mut tail = String::from("],\"project_digest\":");
        push_digest(&mut tail, &self.project_digest);
        tail.push_str(",\"schema_version\":");
        write_string(&mut tail, PROJECT_SCHEMA);
        tail.push_str(",\"summary\":");
        tail.push_str(&summary_json(&self.summary));
        tail.push_str("}\n");
        out.write_all(tail.as_bytes())
    }

    /// The canonical project document as bytes.
    pub fn canonical_bytes(&self) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write_canonical(&mut out)?;
        Ok(out)
    }
}

fn write_entry(out: &mut dyn Write, entry: &ModuleEntry) -> io::Result<()> {
    let mut head = String::from("{");
    match &entry.result {
        Ok(report) => {
            if report.envelope.is_empty() {
                return Err(io::Error::other(
                    "the project was inspected without keeping envelopes",
                ));
            }
            head.push_str("\"inspection\":");
            out.write_all(head.as_bytes())?;
            let envelope = report
                .envelope
                .strip_suffix(b"\n")
                .unwrap_or(&report.envelope);
            out.write_all(envelope)?;
            head.clear();
            head.push(',');
        }
        Err(error) => {
            let (line, column) = match error.position {
                Some(p) => (Value::Int(p.line.into()), Value::Int(p.column.into())),
                None => (Value::Null, Value::Null),
            };
            let object = Value::Object(
                [
                    ("column".to_string(), column),
                    ("kind".to_string(), Value::Str(error.kind.to_string())),
                    ("line".to_string(), line),
                    ("message".to_string(), Value::Str(error.message.clone())),
                ]
                .into_iter()
                .collect(),
            );
            head.push_str("\"error\":");
            head.push_str(&object.canonical_string().map_err(io::Error::other)?);
            head.push(',');
        }
    }
    head.push_str("\"module\":");
    match &entry.module {
        Some(module) => write_string(&mut head, module),
        None => head.push_str("null"),
    }
    head.push_str(",\"path\":");
    write_string(&mut head, &entry.path);
    head.push('}');
    out.write_all(head.as_bytes())
}

fn summary_json(summary: &Summary) -> String {
    let c = &summary.counts;
    format!(
        "{{\"assessments\":{{\"ambiguous\":{},\"conditional\":{},\"ready\":{},\"unsupported\":{}}},\
         \"capabilities\":{},\"diagnostics\":{{\"error\":{},\"info\":{},\"warning\":{}}},\
         \"failed\":{},\"inspected\":{},\"modules\":{},\"needing_attention\":{}}}",
        c.ambiguous,
        c.conditional,
        c.ready,
        c.unsupported,
        c.capabilities,
        c.diagnostic_errors,
        c.diagnostic_infos,
        c.diagnostic_warnings,
        summary.failed,
        summary.inspected,
        summary.modules,
        summary.needing_attention,
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]
mod tests {
    use super::*;
    use crate::project::{ModuleCounts, ModuleError, ModuleReport};

    fn inspected(path: &str, module: &str, ir: &[u8], readiness: &[u8]) -> ModuleEntry {
        ModuleEntry {
            path: path.into(),
            module: Some(module.into()),
            result: Ok(ModuleReport {
                ir_digest: Digest::sha256(ir),
                readiness_digest: Digest::sha256(readiness),
                counts: ModuleCounts::default(),
                envelope: b"{}\n".to_vec(),
                reason_counts: vec![],
                explanation: None,
            }),
            notes: vec![],
        }
    }

    #[test]
    fn empty_project_digest_is_the_digest_of_an_empty_array() {
        assert_eq!(project_digest(&[]), Digest::sha256(b"[]\n"));
    }

    #[test]
    fn project_digest_ignores_paths_order_and_failures() {
        let a = inspected("x/a.py", "a", b"1", b"2");
        let b = inspected("b.py", "b", b"3", b"4");
        let failed = ModuleEntry {
            path: "c.py".into(),
            module: Some("c".into()),
            result: Err(ModuleError {
                kind: "syntax",
                message: "bad".into(),
                position: None,
            }),
            notes: vec![],
        };
        let mut moved = a.clone();
        moved.path = "elsewhere/a.py".into();
        let one = project_digest(&[a.clone(), b.clone()]);
        assert_eq!(one, project_digest(&[b.clone(), moved, failed]));
        let mut expected = String::from("[");
        for (module, ir, readiness) in [("a", b"1", b"2"), ("b", b"3", b"4")] {
            if expected.len() > 1 {
                expected.push(',');
            }
            expected.push_str(&format!(
                "{{\"ir_digest\":{{\"algorithm\":\"sha256\",\"value\":\"{}\"}},\"module\":\"{module}\",\
                 \"readiness_digest\":{{\"algorithm\":\"sha256\",\"value\":\"{}\"}}}}",
                Digest::sha256(ir).value,
                Digest::sha256(readiness).value
            ));
        }
        expected.push_str("]\n");
        assert_eq!(one, Digest::sha256(expected.as_bytes()));
    }

    #[test]
    fn error_entries_serialize_with_sorted_keys_and_null_positions() {
        let entry = ModuleEntry {
            path: "p/\"q\".py".into(),
            module: None,
            result: Err(ModuleError {
                kind: "path",
                message: "no name".into(),
                position: None,
            }),
            notes: vec![],
        };
        let mut out = Vec::new();
        write_entry(&mut out, &entry).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"error\":{\"column\":null,\"kind\":\"path\",\"line\":null,\"message\":\"no name\"},\
             \"module\":null,\"path\":\"p/\\\"q\\\".py\"}"
        );
    }
}
