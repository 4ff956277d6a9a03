//! Command-line definitions (clap derive). Only argument shapes and help text live here; the
//! commands themselves are in `inspect.rs` and `main.rs`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use clap_complete::Shell;

const ROOT_EXAMPLES: &str = "\
Examples:
  apizr inspect examples/pricing.py              readable report for one file
  apizr inspect examples/pricing.py --format json
  apizr inspect examples/notebook.ipynb --ir     only the Capability IR bytes
  apizr inspect src/ --format json               every module under a directory
  apizr execute examples/pricing.py total --arguments args.json --policy policy.json
  apizr run -c 'print(1 + 1)'                    run code in the local sandbox, print the result
  apizr serve rest                               serve the bundled example on 127.0.0.1:8000
  apizr generate rest examples/pricing.py --output-dir pricing-rest
  apizr doctor                                   what this host can enforce
  apizr completion bash > ~/.local/share/bash-completion/completions/apizr";

const INSPECT_EXAMPLES: &str = "\
Exit status:
  0  every assessment is ready or conditional (or there are none)
  1  an assessment is unsupported or ambiguous, or the IR has an error diagnostic;
     for a directory: that holds for some module, or some file could not be inspected
  2  the source could not be inspected (read, decoding, syntax, limits, module name,
     notebook conversion), or the command line is invalid

Examples:
  apizr inspect pricing.py
  apizr inspect pricing.py --format json > inspection.json
  apizr inspect pricing.py --ir | sha256sum        equals the IR digest
  apizr inspect my-file.py --module-name tools.pricing
  apizr inspect analysis.ipynb --strip-magics
  apizr inspect src/ --format text                 one line per module
  apizr inspect src/ --readiness v2 --blockers     what to fix first, ranked";

const EXECUTE_EXAMPLES: &str = "\
Exit status:
  0  the call succeeded (status `success`)
  1  any other status; stdout is the result envelope, and a failure decided before a worker
     ran (policy, arguments, source, selection, validation) prints one line on stderr:
     `apizr execute: <status>: <stage>: <detail>` (left out when --report writes to stderr)
  2  the command line is invalid, or the --audit file cannot be opened

Examples:
  apizr execute pricing.py total --arguments args.json --policy policy.json
  apizr execute pricing.py total --arguments args.json --policy policy.json --report";

/// apizr — turn Python functions into governed capabilities, without importing them.
#[derive(Debug, Parser)]
#[command(
    name = "apizr",
    version,
    about = "Inspect Python files and notebooks into a Capability IR and readiness report, \
             and run capabilities under a policy",
    after_help = ROOT_EXAMPLES,
    arg_required_else_help = true,
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inspect a Python file, a notebook or a directory (never imports or runs it)
    #[command(after_help = INSPECT_EXAMPLES)]
    Inspect(InspectArgs),
    /// Run one capability once under an execution policy and print the result envelope
    #[command(after_help = EXECUTE_EXAMPLES)]
    Execute(crate::execute::ExecuteArgs),
    /// Run a piece of Python code in an interpreter tier (static, local, local_unsafe, docker,
    /// docker_unsafe) and print the result JSON
    #[command(after_help = crate::run::RUN_EXAMPLES)]
    Run(crate::run::RunArgs),
    /// Generate a REST or MCP server project (a Rust crate) from a Python file or notebook
    #[command(subcommand)]
    Generate(crate::generate::GenerateCommand),
    /// Serve capabilities over REST or MCP straight from a source file (no code generation)
    #[command(subcommand)]
    Serve(Box<crate::serve::ServeCommand>),
    /// Build OCI worker images (offline) for `execute --runtime-image`
    #[command(subcommand)]
    Image(crate::image::ImageCommand),
    /// Show what this host can enforce (interpreter, launcher, namespaces, Landlock, seccomp,
    /// cgroups, Docker) and how each policy control would be enforced or why it is refused
    Doctor(crate::doctor::DoctorArgs),
    /// Print a shell completion script to stdout
    #[command(after_help = "Example:\n  apizr completion zsh > ~/.zfunc/_apizr")]
    Completion {
        /// The shell to generate completions for
        shell: Shell,
    },
}

impl Command {
    /// The command's name as typed (`serve`, not `serve rest`): the prefix of its error lines.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Inspect(_) => "inspect",
            Command::Execute(_) => "execute",
            Command::Run(_) => "run",
            Command::Generate(_) => "generate",
            Command::Serve(_) => "serve",
            Command::Image(_) => "image",
            Command::Doctor(_) => "doctor",
            Command::Completion { .. } => "completion",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A readable report
    Text,
    /// The canonical inspection envelope (for a directory: the project document)
    Json,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A `.py` file, a `.ipynb` notebook, or a directory to inspect recursively
    pub source: PathBuf,

    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text, conflicts_with = "ir")]
    pub format: Format,

    /// Print only the canonical Capability IR bytes (their sha256 is the IR digest)
    #[arg(long)]
    pub ir: bool,

    /// Print the explanation document instead (JSON, `apizr.explanation/v1`): per reason the
    /// culprit, its position and a fix; reasons shared by a whole module listed once
    #[arg(long, conflicts_with_all = ["ir", "format"])]
    pub explain: bool,

    /// With `--readiness v2`, for a directory: the top-level statements that keep functions
    /// from being ready, ranked by how many functions each blocks (through imports and parent
    /// packages), and the functions' own reasons (`--format json`: `apizr.blockers/v1`)
    #[arg(long, conflicts_with_all = ["ir", "explain"])]
    pub blockers: bool,

    /// Logical dotted module name (default: the file stem); single files only
    #[arg(long, value_name = "NAME")]
    pub module_name: Option<String>,

    /// Comment out IPython magics and shell lines in notebooks instead of refusing them
    #[arg(long)]
    pub strip_magics: bool,

    /// Worker threads for a directory (default: all cores)
    #[arg(long, value_name = "N", hide_short_help = true)]
    pub threads: Option<usize>,

    /// Readiness policy: v1 (the reference's `apizr.readiness/v1`) or v2 (opt-in: proves more
    /// top-level statements harmless; `apizr.readiness/v2`, its own digest)
    #[arg(long, value_enum, default_value_t = Readiness::V1)]
    pub readiness: Readiness,

    /// Directory of the wheels the bundle installs (as for `generate --wheelhouse`): under
    /// `--readiness v2`, a declared distribution's import names are read from its wheel
    /// (`PyYAML` installs `yaml`); directories only
    #[arg(long, value_name = "DIR")]
    pub wheelhouse: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Readiness {
    V1,
    V2,
}

impl Readiness {
    pub fn policy(self) -> apizr_ir::ReadinessPolicy {
        match self {
            Readiness::V1 => apizr_ir::ReadinessPolicy::V1,
            Readiness::V2 => apizr_ir::ReadinessPolicy::V2,
        }
    }
}
