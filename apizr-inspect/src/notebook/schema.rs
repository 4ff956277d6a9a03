//! nbformat 4 structure validation (the parts of the v4.0–v4.5 JSON schema that nbformat
//! enforces for the reference: required fields and their types, cell ids, execution counts,
//! outputs, and the typed metadata fields). Unknown extra keys are tolerated, as nbformat
//! tolerates them. Every failure is `Invalid notebook structure: <where>: <what>`.

use serde_json::{Map, Value};

use super::preflight::kind_name;
use crate::error::InspectError;

/// One validated cell, borrowed from the notebook.
pub struct Cell<'a> {
    pub kind: CellKind,
    pub source: String,
    pub execution_count: Option<u64>,
    pub raw_mimetype: Option<&'a str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellKind {
    Code,
    Markdown,
    Raw,
}

fn invalid(place: &str, what: impl std::fmt::Display) -> InspectError {
    InspectError::Notebook {
        message: format!("Invalid notebook structure: {place}: {what}"),
    }
}

fn object<'a>(value: &'a Value, place: &str) -> Result<&'a Map<String, Value>, InspectError> {
    value.as_object().ok_or_else(|| {
        invalid(
            place,
            format!("expected an object, found {}", kind_name(value)),
        )
    })
}

fn required<'a>(
    map: &'a Map<String, Value>,
    key: &str,
    place: &str,
) -> Result<&'a Value, InspectError> {
    map.get(key)
        .ok_or_else(|| invalid(place, format!("missing required field '{key}'")))
}

fn non_negative(value: &Value) -> Option<u64> {
    value.as_u64()
}

/// Validate the notebook and return its cells in order.
pub fn cells(notebook: &Map<String, Value>) -> Result<Vec<Cell<'_>>, InspectError> {
    let version = match notebook.get("nbformat") {
        // nbformat reads a document without `nbformat` as version 1, whose upgrade keeps no
        // cells from a v4-style `cells` list: the reference exports only the header. Anything
        // with content is refused rather than guessed at.
        None => return legacy_v1(notebook),
        Some(version) => version,
    };
    if version.as_u64() == Some(3) {
        return upgrade_v3(notebook);
    }
    if version.as_u64() != Some(4) {
        return Err(InspectError::Notebook {
            message: format!(
                "Unsupported nbformat version {version}; only nbformat 3 and 4 are supported"
            ),
        });
    }
    if non_negative(required(notebook, "nbformat_minor", "notebook")?).is_none() {
        return Err(invalid("nbformat_minor", "expected a non-negative integer"));
    }
    notebook_metadata(object(
        required(notebook, "metadata", "notebook")?,
        "metadata",
    )?)?;
    let cells = required(notebook, "cells", "notebook")?
        .as_array()
        .ok_or_else(|| invalid("cells", "expected an array"))?;
    cells
        .iter()
        .enumerate()
        .map(|(index, cell)| validate_cell(cell, &format!("cell {}", index + 1)))
        .collect()
}

fn notebook_metadata(metadata: &Map<String, Value>) -> Result<(), InspectError> {
    if let Some(spec) = metadata.get("kernelspec") {
        let spec = object(spec, "metadata.kernelspec")?;
        for key in ["name", "display_name"] {
            if !required(spec, key, "metadata.kernelspec")?.is_string() {
                return Err(invalid(
                    "metadata.kernelspec",
                    format!("'{key}' must be a string"),
                ));
            }
        }
    }
    if let Some(info) = metadata.get("language_info") {
        let info = object(info, "metadata.language_info")?;
        if !required(info, "name", "metadata.language_info")?.is_string() {
            return Err(invalid("metadata.language_info", "'name' must be a string"));
        }
    }
    Ok(())
}

fn source(value: &Value, place: &str) -> Result<String, InspectError> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Array(items) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .ok_or_else(|| invalid(place, "'source' list items must be strings"))
            })
            .collect(),
        other => Err(invalid(
            place,
            format!(
                "'source' must be a string or a list of strings, found {}",
                kind_name(other)
            ),
        )),
    }
}

fn validate_cell<'a>(cell: &'a Value, place: &str) -> Result<Cell<'a>, InspectError> {
    let cell = object(cell, place)?;
    let kind = match required(cell, "cell_type", place)?.as_str() {
        Some("code") => CellKind::Code,
        Some("markdown") => CellKind::Markdown,
        Some("raw") => CellKind::Raw,
        _ => {
            return Err(invalid(
                place,
                "'cell_type' must be 'code', 'markdown' or 'raw'",
            ));
        }
    };
    if let Some(id) = cell.get("id") {
        let ok = id.as_str().is_some_and(|s| {
            (1..=64).contains(&s.len())
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
        if !ok {
            return Err(invalid(
                place,
                "'id' must be 1-64 characters of [a-zA-Z0-9-_]",
            ));
        }
    }
    let metadata = object(required(cell, "metadata", place)?, place)?;
    cell_metadata(metadata, place)?;
    let text = source(required(cell, "source", place)?, place)?;
    let mut execution_count = None;
    if kind == CellKind::Code {
        let count = required(cell, "execution_count", place)?;
        if !count.is_null() {
            execution_count = Some(non_negative(count).ok_or_else(|| {
                invalid(
                    place,
                    "'execution_count' must be null or a non-negative integer",
                )
            })?);
        }
        let outputs = required(cell, "outputs", place)?
            .as_array()
            .ok_or_else(|| invalid(place, "'outputs' must be an array"))?;
        for output in outputs {
            validate_output(output, place)?;
        }
    }
    let raw_mimetype = metadata
        .get("raw_mimetype")
        .or_else(|| metadata.get("format"))
        .and_then(Value::as_str);
    Ok(Cell {
        kind,
        source: text,
        execution_count,
        raw_mimetype,
    })
}

type Check = (&'static str, fn(&Value) -> bool);

fn cell_metadata(metadata: &Map<String, Value>, place: &str) -> Result<(), InspectError> {
    let checks: [Check; 6] = [
        ("tags", |v| {
            v.as_array().is_some_and(|a| {
                a.iter()
                    .all(|t| t.as_str().is_some_and(|s| !s.contains(',')))
            })
        }),
        ("collapsed", Value::is_boolean),
        ("scrolled", |v| v.is_boolean() || v.as_str() == Some("auto")),
        ("jupyter", Value::is_object),
        ("execution", Value::is_object),
        ("name", Value::is_string),
    ];
    for (key, ok) in checks {
        if metadata.get(key).is_some_and(|v| !ok(v)) {
            return Err(invalid(
                place,
                format!("metadata field '{key}' has the wrong type"),
            ));
        }
    }
    Ok(())
}

fn validate_output(output: &Value, place: &str) -> Result<(), InspectError> {
    let output = object(output, place)?;
    let needs: &[&str] = match output.get("output_type").and_then(Value::as_str) {
        Some("stream") => &["name", "text"],
        Some("display_data") => &["data", "metadata"],
        Some("execute_result") => &["data", "metadata", "execution_count"],
        Some("error") => &["ename", "evalue", "traceback"],
        _ => return Err(invalid(place, "an output has an unknown 'output_type'")),
    };
    for key in needs {
        required(output, key, place)?;
    }
    Ok(())
}

fn legacy_v1(notebook: &Map<String, Value>) -> Result<Vec<Cell<'_>>, InspectError> {
    let empty = notebook
        .get("cells")
        .is_none_or(|cells| cells.as_array().is_some_and(|c| c.is_empty()));
    if empty && notebook.get("worksheets").is_none() {
        return Ok(vec![]);
    }
    Err(InspectError::Notebook {
        message: "Unsupported notebook: no 'nbformat' field (a version 1 notebook); \
                  save it with a current Jupyter first"
            .into(),
    })
}

/// nbformat 3 → 4 the way nbformat's `convert` upgrades it: cells come from every worksheet,
/// a code cell's `input` becomes its source and `prompt_number` its execution count, and a
/// heading cell becomes a markdown cell `<#×level> <text>`.
fn upgrade_v3(notebook: &Map<String, Value>) -> Result<Vec<Cell<'_>>, InspectError> {
    let mut out = Vec::new();
    // The v3 schema requires `worksheets` (nbformat refuses a v3 document without it).
    let worksheets = required(notebook, "worksheets", "notebook")?
        .as_array()
        .ok_or_else(|| invalid("worksheets", "expected an array"))?;
    for (w, worksheet) in worksheets.iter().enumerate() {
        let place = format!("worksheet {}", w + 1);
        let worksheet = object(worksheet, &place)?;
        let Some(cells) = worksheet.get("cells") else {
            continue;
        };
        let cells = cells
            .as_array()
            .ok_or_else(|| invalid(&place, "'cells' must be an array"))?;
        for (index, cell) in cells.iter().enumerate() {
            let place = format!("{place} cell {}", index + 1);
            let cell = object(cell, &place)?;
            let text = |key: &str| -> Result<String, InspectError> {
                cell.get(key)
                    .map_or(Ok(String::new()), |v| source(v, &place))
            };
            let converted = match required(cell, "cell_type", &place)?.as_str() {
                Some("code") => Cell {
                    kind: CellKind::Code,
                    source: text("input")?,
                    execution_count: cell.get("prompt_number").and_then(Value::as_u64),
                    raw_mimetype: None,
                },
                Some("markdown") => Cell {
                    kind: CellKind::Markdown,
                    source: text("source")?,
                    execution_count: None,
                    raw_mimetype: None,
                },
                Some("raw") => Cell {
                    kind: CellKind::Raw,
                    source: text("source")?,
                    execution_count: None,
                    raw_mimetype: None,
                },
                Some("heading") => {
                    let level = cell.get("level").and_then(Value::as_u64).unwrap_or(1);
                    let hashes = "#".repeat(usize::try_from(level.clamp(1, 6)).unwrap_or(1));
                    let heading = text("source")?.replace('\n', " ");
                    Cell {
                        kind: CellKind::Markdown,
                        source: format!("{hashes} {heading}"),
                        execution_count: None,
                        raw_mimetype: None,
                    }
                }
                _ => {
                    return Err(invalid(
                        &place,
                        "'cell_type' must be 'code', 'markdown', 'raw' or 'heading'",
                    ));
                }
            };
            out.push(converted);
        }
    }
    Ok(out)
}
