//! `apizr inspect SOURCE`: one file (the reference tool's command) or a whole directory.
//!
//! The work is done by `apizr-inspect`; this module picks the mode, runs the inspection on a
//! thread with a large stack (the parser and unparser recurse on deeply nested input), prints
//! the chosen output and maps the result to the reference's exit status (0 ready, 1 needs
//! attention, 2 input error).

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use apizr_inspect::on_inspect_stack;
use apizr_inspect::project::{self, Progress, ProjectOptions};
use apizr_inspect::{InspectError, InspectOptions, Note, Outcome};

use crate::cli::{Format, InspectArgs, Readiness};
use crate::diagnostics::{self, Context};
use crate::style::Style;
use crate::{EXIT_ATTENTION, EXIT_INPUT, project_report};

pub fn run(args: &InspectArgs) -> anyhow::Result<ExitCode> {
    if args.blockers && args.readiness != Readiness::V2 {
        return Ok(usage_error(
            "`--blockers` needs `--readiness v2` (v1 judges each module alone; it follows no \
             import to the statement at fault)",
        ));
    }
    if args.blockers && !args.source.is_dir() {
        return Ok(usage_error(&format!(
            "`--blockers` summarises a directory, and {} is not one (for one file, \
             `--explain` lists its reasons)",
            args.source.display()
        )));
    }
    if args.source.is_dir() {
        return run_dir(args);
    }
    if args.wheelhouse.is_some() {
        return Ok(usage_error(
            "`--wheelhouse` applies to a package directory (its declared distributions)",
        ));
    }
    let options = InspectOptions {
        strip_magics: args.strip_magics,
        // The text report and `--explain` show explanations; `--ir` and the envelope do not.
        explain: args.explain || (!args.ir && args.format == Format::Text),
        readiness: args.readiness.policy(),
    };
    let path = args.source.clone();
    let module = args.module_name.clone();
    let outcome =
        on_inspect_stack(|| apizr_inspect::inspect_path(&path, module.as_deref(), options))
            .context("could not start the inspection thread")?;
    match outcome {
        Ok(outcome) => print_file(args, &outcome),
        Err(error) => Ok(file_error(args, &error)),
    }
}

fn print_file(args: &InspectArgs, outcome: &Outcome) -> anyhow::Result<ExitCode> {
    let stderr_style = Style::for_stderr();
    for note in &outcome.notes {
        eprintln!("{}", note_line(&args.source, note, stderr_style));
    }
    let inspection = &outcome.inspection;
    let explanation = outcome.explanation.as_ref();
    let bytes = if args.ir {
        apizr_ir::canonical_bytes(&inspection.capability_ir)?
    } else if args.explain {
        let explanation = explanation.context("the explanation was not built")?;
        explanation.canonical_bytes()?
    } else {
        match args.format {
            Format::Json => apizr_ir::canonical_bytes(inspection)?,
            Format::Text => {
                let source = args.source.display().to_string();
                crate::report::render(inspection, explanation, &source, Style::for_stdout())
                    .into_bytes()
            }
        }
    };
    write_stdout(&bytes)?;
    Ok(if project::needs_attention(inspection) {
        ExitCode::from(EXIT_ATTENTION)
    } else {
        ExitCode::SUCCESS
    })
}

fn file_error(args: &InspectArgs, error: &InspectError) -> ExitCode {
    let context = Context {
        command: "inspect",
        path: &args.source,
        derived_module_name: args.module_name.is_none(),
        is_notebook: args.source.extension().is_some_and(|e| e == "ipynb"),
    };
    eprint!(
        "{}",
        diagnostics::render(error, &context, Style::for_stderr())
    );
    ExitCode::from(EXIT_INPUT)
}

fn note_line(path: &Path, note: &Note, style: Style) -> String {
    let location = match note.position {
        Some(p) => format!("{}:{}:{}", path.display(), p.line, p.column),
        None => path.display().to_string(),
    };
    format!("{} {location}: {}", style.warning("warning:"), note.message)
}

fn run_dir(args: &InspectArgs) -> anyhow::Result<ExitCode> {
    if args.ir {
        return Ok(usage_error(
            "`--ir` prints one module's IR; use `--format json` for a directory",
        ));
    }
    if args.module_name.is_some() {
        return Ok(usage_error(
            "`--module-name` applies to a single file; in a directory, module names come from relative paths",
        ));
    }
    let options = ProjectOptions {
        inspect: InspectOptions {
            strip_magics: args.strip_magics,
            // The blockers summary is computed from the explanations.
            explain: args.explain || args.blockers,
            readiness: args.readiness.policy(),
        },
        threads: args.threads,
        keep_envelopes: args.format == Format::Json && !args.explain && !args.blockers,
    };
    let show_progress = std::io::stderr().is_terminal();
    let progress = |p: Progress| {
        if show_progress && (p.done == p.total || p.done.is_multiple_of(16)) {
            eprint!("\r\x1b[2Kinspecting: {}/{} files", p.done, p.total);
        }
    };
    let provides = match &args.wheelhouse {
        Some(dir) => match apizr_inspect::package::wheelhouse_imports(dir) {
            Ok(provides) => provides,
            Err(error) => return Ok(usage_error(&format!("--wheelhouse {error}"))),
        },
        None => Default::default(),
    };
    let result = project::inspect_dir_with_wheels(&args.source, &options, &progress, &provides);
    if show_progress {
        eprint!("\r\x1b[2K");
    }
    let inspection = match result {
        Ok(inspection) => inspection,
        Err(error) => {
            eprintln!("{} {error}", Style::for_stderr().error("apizr inspect:"));
            return Ok(ExitCode::from(EXIT_INPUT));
        }
    };
    let stderr_style = Style::for_stderr();
    for entry in &inspection.modules {
        for note in &entry.notes {
            eprintln!(
                "{}",
                note_line(&args.source.join(&entry.path), note, stderr_style)
            );
        }
    }
    if inspection.modules.is_empty() {
        eprintln!(
            "{} no Python files or notebooks found under {}",
            stderr_style.warning("warning:"),
            args.source.display()
        );
    }
    let blockers = args
        .blockers
        .then(|| apizr_inspect::project::blockers::Blockers::of(&inspection));
    match args.format {
        _ if args.explain => write_stdout(&inspection.explanation_bytes()?)?,
        Format::Json if let Some(blockers) = &blockers => {
            write_stdout(&blockers.canonical_bytes()?)?
        }
        Format::Text if let Some(blockers) = &blockers => {
            let text = crate::blockers_report::render(blockers, Style::for_stdout());
            write_stdout(text.as_bytes())?;
        }
        Format::Json => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            let written = inspection
                .write_canonical(&mut out)
                .and_then(|()| out.flush());
            ignore_broken_pipe(written)?;
        }
        Format::Text => {
            let text = project_report::render(&inspection, Style::for_stdout());
            write_stdout(text.as_bytes())?;
        }
    }
    Ok(if inspection.summary.is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_ATTENTION)
    })
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("{} {message}", Style::for_stderr().error("apizr inspect:"));
    ExitCode::from(EXIT_INPUT)
}

/// Write to stdout; a closed pipe (`apizr inspect ... | head`) is not an error.
fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    ignore_broken_pipe(lock.write_all(bytes).and_then(|()| lock.flush()))
}

fn ignore_broken_pipe(result: std::io::Result<()>) -> anyhow::Result<()> {
    match result {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other.context("could not write to stdout")?),
    }
}
