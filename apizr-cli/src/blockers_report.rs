//! The text form of `apizr inspect DIR --readiness v2 --blockers`: the statements at fault,
//! ranked by the functions they block, the sets of culprits whose proof makes functions
//! ready, and the functions' own reasons. The summary is computed by
//! `apizr_inspect::project::blockers` (one implementation); this only lays it out. The JSON
//! document (`--format json`, `apizr.blockers/v1`) is the stable interface.

use std::fmt::Write as _;

use apizr_inspect::project::blockers::Blockers;

use crate::style::Style;

/// How many culprits and sets the text shows (the JSON holds them all).
const SHOWN: usize = 20;

/// Always ends with a newline.
pub fn render(blockers: &Blockers, style: Style) -> String {
    let mut out = String::new();
    let f = &blockers.functions;
    let _ = writeln!(
        out,
        "{} functions: {} ready; not ready: {} blocked only by module top levels, {} by top \
         levels and their own reasons, {} by their own reasons only, {} otherwise",
        f.total, f.ready, f.blocked_by_top_levels, f.blocked_by_both, f.own_reasons_only, f.other
    );
    if f.other > 0 {
        let _ = writeln!(
            out,
            "{} not ready for no reason the explanations name: a module they import could not be \
             inspected (`apizr inspect DIR` lists the errors)",
            f.other
        );
    }
    if blockers.culprits.is_empty() {
        let _ = writeln!(out, "\nno top-level statement blocks a function");
    } else {
        let _ = writeln!(
            out,
            "\n{}",
            style.bold(
                "statements at fault, by the functions they block (+N: also with own reasons)"
            )
        );
    }
    for c in blockers.culprits.iter().take(SHOWN) {
        let also = match c.also_own_reasons {
            0 => String::new(),
            n => format!(" +{n}"),
        };
        let _ = writeln!(
            out,
            "{:>3}. {:>4}{also}  {}:{}:{}  {}  `{}`",
            c.rank, c.functions, c.path, c.line, c.column, c.code, c.text
        );
        if let Some(note) = &c.note {
            let _ = writeln!(out, "          {}", style.dim(note));
        }
        let _ = writeln!(out, "          {} {}", style.bold("fix:"), c.fix);
    }
    if blockers.culprits.len() > SHOWN {
        let _ = writeln!(
            out,
            "     ... {} more (--format json lists them all)",
            blockers.culprits.len() - SHOWN
        );
    }
    if !blockers.sets.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            style.bold("functions made ready by proving exactly these statements (by rank)")
        );
    }
    for set in blockers.sets.iter().take(SHOWN) {
        let _ = writeln!(out, "  +{:<4} {}", set.functions, ranges(&set.culprits));
    }
    if blockers.sets.len() > SHOWN {
        let _ = writeln!(out, "  ... {} more sets", blockers.sets.len() - SHOWN);
    }
    if !blockers.own_reasons.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            style.bold("own reasons of functions (inputs, outputs, ...), by code")
        );
    }
    for reason in &blockers.own_reasons {
        let _ = writeln!(
            out,
            "  {:>4}  {}  {}",
            reason.functions, reason.code, reason.summary
        );
    }
    out
}

/// Sorted ranks as `#1-#4, #7`: runs of consecutive ranks are one range.
fn ranges(ranks: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while let Some(&start) = ranks.get(i) {
        let mut end = start;
        while ranks.get(i + 1) == Some(&(end + 1)) {
            end += 1;
            i += 1;
        }
        parts.push(match end - start {
            0 => format!("#{start}"),
            1 => format!("#{start}, #{end}"),
            _ => format!("#{start}-#{end}"),
        });
        i += 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn consecutive_ranks_are_one_range() {
        assert_eq!(super::ranges(&[1, 2, 3, 4, 7, 9, 10]), "#1-#4, #7, #9, #10");
        assert_eq!(super::ranges(&[]), "");
    }
}
