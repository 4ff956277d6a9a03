//! Landlock, the second filesystem layer (under the private mount tree) and the scoping of
//! abstract unix sockets and signals to the call (ABI 6 and later).

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope,
};

use super::LandlockConfig;

/// The Landlock ABI whose filesystem rights we ask for (best effort below it, reported as
/// partial).
pub(crate) const LANDLOCK_ABI: ABI = ABI::V5;
/// The ABI that added scopes (abstract unix sockets, signals).
const SCOPE_ABI: ABI = ABI::V6;

/// Restrict this process: filesystem rules when given, and with `scoped` (kernel ABI 6 or
/// later) no connection to abstract unix sockets and no signal to processes outside the call.
pub(super) fn apply(rules: Option<&LandlockConfig>, scoped: bool) -> Result<(), String> {
    if rules.is_none() && !scoped {
        return Ok(());
    }
    let err = |e: landlock::RulesetError| format!("landlock: {e}");
    let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::BestEffort);
    if rules.is_some() {
        ruleset = ruleset
            .handle_access(AccessFs::from_all(LANDLOCK_ABI))
            .map_err(err)?;
    }
    if scoped {
        ruleset = ruleset.scope(Scope::from_all(SCOPE_ABI)).map_err(err)?;
    }
    let mut created = ruleset.create().map_err(err)?;
    if let Some(rules) = rules {
        let read = AccessFs::from_read(LANDLOCK_ABI);
        let file_rw = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate;
        for (paths, access) in [
            (&rules.read_only, read),
            (&rules.read_write, AccessFs::from_all(LANDLOCK_ABI)),
            (&rules.write_files, file_rw),
        ] {
            for path in paths {
                let fd =
                    PathFd::new(path).map_err(|e| format!("landlock {}: {e}", path.display()))?;
                created = created
                    .add_rule(PathBeneath::new(fd, access))
                    .map_err(err)?;
            }
        }
    }
    let status = created.restrict_self().map_err(err)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err("landlock: ruleset not enforced by this kernel".into());
    }
    Ok(())
}
