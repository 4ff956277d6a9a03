//! The `apizr` command-line tool.
//!
//! Thin by design: argument parsing (`cli`), printing (`report`, `project_report`,
//! `diagnostics`) and exit codes. Everything that computes something lives in `apizr-inspect`
//! and `apizr-ir` (pure functions over values) or `apizr-runtime` (`execute`).

mod blockers_report;
mod cli;
mod diagnostics;
mod doctor;
mod execute;
mod generate;
mod image;
mod image_environment;
mod image_project;
mod inspect;
mod project_report;
mod refusal;
mod report;
mod run;
mod serve;
mod style;

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use crate::cli::{Cli, Command};
use crate::style::Style;

/// Something needs attention (unsupported/ambiguous assessment, IR error diagnostic).
pub const EXIT_ATTENTION: u8 = 1;
/// The input could not be processed, or the command line is invalid.
pub const EXIT_INPUT: u8 = 2;

fn main() -> ExitCode {
    // Governed calls re-exec this binary as their launcher (`apizr serve --policy`, `execute`).
    apizr_runtime::launcher::run_if_requested();
    // A panic is a bug in apizr, never the user's fault: one line, no backtrace noise.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("apizr: internal error (please report it): {info}");
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // `--help` and `--version` exit 0; usage errors exit 2 (clap's convention, and ours).
        Err(error) => error.exit(),
    };
    let result = match &cli.command {
        Command::Inspect(args) => inspect::run(args),
        Command::Execute(args) => Ok(execute::run(args)),
        Command::Run(args) => run::run(args),
        Command::Generate(command) => Ok(generate::run(command)),
        Command::Serve(command) => serve::run(command),
        Command::Image(command) => image::run(command),
        Command::Doctor(args) => Ok(doctor::run(args)),
        Command::Completion { shell } => {
            let mut command = Cli::command();
            clap_complete::generate(*shell, &mut command, "apizr", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            // Errors name the command that failed (`apizr serve: …`), as every other error
            // line of this tool does.
            let style = Style::for_stderr();
            let prefix = format!("apizr {}:", cli.command.name());
            eprintln!("{} {error:#}", style.error(&prefix));
            ExitCode::from(EXIT_INPUT)
        }
    }
}
