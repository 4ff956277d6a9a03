//! Directory inspection. OWNER: CLI helper.
