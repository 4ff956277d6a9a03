//! The eligibility refusal, worded per command.
//!
//! The planner's message is the reference's `generate` refusal ("Generation refused; select
//! only eligible capabilities: f: conditional (APIZR-READY-004)") and stays byte-identical
//! there. `execute` and `serve` do not generate anything: they name their own verb and keep
//! the list of refused capabilities with their states and reason codes.

use apizr_inspect::interface::PlanError;

/// `f: conditional (APIZR-READY-004); g: unsupported (…)` when `error` is an eligibility
/// refusal, `None` otherwise.
pub fn refused_capabilities(error: &PlanError) -> Option<&str> {
    let PlanError::Refused(message) = error else {
        return None;
    };
    Some(
        message
            .split_once("capabilities: ")
            .map_or(message.as_str(), |(_, list)| list),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_list_and_drops_the_generate_wording() {
        let refused = PlanError::Refused(
            "Generation refused; select only eligible capabilities: f: conditional \
             (APIZR-READY-004)"
                .into(),
        );
        assert_eq!(
            refused_capabilities(&refused),
            Some("f: conditional (APIZR-READY-004)")
        );
        assert_eq!(
            refused_capabilities(&PlanError::UnknownSelection("g".into())),
            None
        );
    }
}
