//! The two transports and the names a generated project's files carry for each.
//!
//! Why one enum here: the generator writes a project's manifest, interface document and
//! contract list under these names, and the runtime's bundle loader (and `apizr serve`) reads
//! them back; one definition keeps the writer and the reader on the same layout.

use super::{mcp, openapi};

/// Which server a project is, or which protocol a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Rest,
    Mcp,
}

impl Transport {
    /// Both, in the order a bundle directory is searched for its manifest.
    pub const ALL: [Transport; 2] = [Transport::Rest, Transport::Mcp];

    /// `rest` / `mcp`: the CLI subcommand, the manifest's `transport` and the cargo feature.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Rest => "rest",
            Transport::Mcp => "mcp",
        }
    }

    /// `REST` / `MCP`, for people (log lines, errors, READMEs).
    pub fn label(self) -> &'static str {
        match self {
            Transport::Rest => "REST",
            Transport::Mcp => "MCP",
        }
    }

    /// The manifest's `schema_version` (`apizr.rest/v1` / `apizr.mcp/v1`).
    pub fn schema(self) -> &'static str {
        match self {
            Transport::Rest => openapi::REST_SCHEMA,
            Transport::Mcp => mcp::MCP_SCHEMA,
        }
    }

    /// The manifest's file name in a project.
    pub fn manifest_file(self) -> &'static str {
        match self {
            Transport::Rest => "apizr-rest.json",
            Transport::Mcp => "apizr-mcp.json",
        }
    }

    /// The published interface document's file name in a project.
    pub fn interface_file(self) -> &'static str {
        match self {
            Transport::Rest => "openapi.json",
            Transport::Mcp => "mcp-tools.json",
        }
    }

    /// The manifest key of the contract list.
    pub fn contracts_key(self) -> &'static str {
        match self {
            Transport::Rest => "capabilities",
            Transport::Mcp => "tools",
        }
    }
}
