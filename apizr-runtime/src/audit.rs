//! One audit record per call, as one canonical JSON line.
//!
//! The record holds identities and outcomes only — capability id, executable and policy
//! digests, status, duration, limits hit, mechanisms — and never argument values or
//! environment values (only the names of allow-listed variables are in the policy digest).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::Mutex;

use serde::Serialize;

use crate::local::enforcement::ControlReport;
use crate::local::prestart::{ColdReason, ProcessSource};

/// `schema_version` of audit records.
pub const AUDIT_SCHEMA: &str = "apizr.audit/v1";

/// What is recorded about one call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditRecord {
    pub schema_version: &'static str,
    pub capability_id: String,
    pub executable_digest: String,
    pub policy_digest: String,
    pub status: &'static str,
    pub duration_ms: u64,
    pub limits_hit: Vec<String>,
    /// Requested controls this host could not enforce (the call was `policy_refused`).
    pub refused: Vec<&'static str>,
    pub controls: Vec<ControlReport>,
    /// Who decided `status`: `supervisor` (what it observed: refusal, deadline, output bound,
    /// exit, protocol) or `worker` (the claim in the worker's frame, made by the process that
    /// also ran the user's code). `limits_hit`, `duration_ms` and `exit` are always observed
    /// by the supervisor.
    pub status_source: &'static str,
    /// The status the worker's frame claimed, even when the supervisor overruled it.
    pub worker_status: Option<&'static str>,
    /// `exit N` / `signal N`, as the supervisor observed it.
    pub exit: Option<String>,
    /// v1 calls of a runtime that keeps pre-started workers (servers): how the worker was
    /// obtained and whether it had imported the module ahead (absent elsewhere).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessRecord>,
}

/// How a pooled runtime obtained a call's worker (the call report's fields of the same name).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProcessRecord {
    pub source: ProcessSource,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preimported: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cold_reason: Option<ColdReason>,
}

impl AuditRecord {
    /// The record as one canonical JSON line (with its `\n`).
    pub fn to_line(&self) -> Vec<u8> {
        apizr_ir::json::canonical_bytes(self).unwrap_or_else(|_| b"{}\n".to_vec())
    }
}

/// Where audit records go.
pub trait AuditSink: Send + Sync + std::fmt::Debug {
    fn record(&self, record: &AuditRecord) -> io::Result<()>;
}

/// Appends JSON lines to a file.
#[derive(Debug)]
pub struct FileAuditSink {
    file: Mutex<File>,
}

impl FileAuditSink {
    pub fn open(path: &Path) -> io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(FileAuditSink {
            file: Mutex::new(file),
        })
    }
}

impl AuditSink for FileAuditSink {
    fn record(&self, record: &AuditRecord) -> io::Result<()> {
        let mut file = self
            .file
            .lock()
            .map_err(|_| io::Error::other("audit file lock poisoned"))?;
        file.write_all(&record.to_line())
    }
}

/// Writes JSON lines to stderr.
#[derive(Debug, Default)]
pub struct StderrAuditSink;

impl AuditSink for StderrAuditSink {
    fn record(&self, record: &AuditRecord) -> io::Result<()> {
        io::stderr().lock().write_all(&record.to_line())
    }
}
