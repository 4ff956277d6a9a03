//! Dropping every privilege before the worker runs.
//!
//! Order matters: the securebits and the bounding set need `CAP_SETPCAP`, so they go first;
//! then the supplementary groups, gid and uid (changing the uid away from 0 clears the
//! permitted and effective sets, because `SECBIT_KEEP_CAPS` is off and locked); then the
//! remaining sets are emptied explicitly and the result is read back. `SECBIT_NOROOT` (locked)
//! means that even uid 0 inside a user namespace gains nothing at `execve`.

use std::fs;

use nix::unistd::{Gid, Uid, setgroups, setresgid, setresuid};
use rustix::thread::{
    CapabilitiesSecureBits, CapabilitySet, CapabilitySets, clear_ambient_capability_set,
    remove_capability_from_bounding_set, set_capabilities, set_capabilities_secure_bits,
};

use super::Identity;

/// Apply `identity` to this (single-threaded) process. `last_cap` is the kernel's
/// `/proc/sys/kernel/cap_last_cap`, read before the filesystem view changed.
pub(super) fn drop_privileges(identity: &Identity, last_cap: u32) -> Result<(), String> {
    match identity {
        Identity::Caller => {
            // Unprivileged already (the planner only chooses this for a non-root caller
            // without a user namespace); clear what could still be there.
            let _ = clear_ambient_capability_set();
            empty_sets()?;
        }
        Identity::Ids { uid, gid } => {
            lock_securebits()?;
            empty_bounding_set(last_cap)?;
            clear_ambient_capability_set().map_err(|e| format!("ambient capabilities: {e}"))?;
            setgroups(&[]).map_err(|e| format!("setgroups: {e}"))?;
            let (uid, gid) = (Uid::from_raw(*uid), Gid::from_raw(*gid));
            setresgid(gid, gid, gid).map_err(|e| format!("setresgid({gid}): {e}"))?;
            setresuid(uid, uid, uid).map_err(|e| format!("setresuid({uid}): {e}"))?;
            empty_sets()?;
        }
        Identity::NamespaceRoot => {
            lock_securebits()?;
            empty_bounding_set(last_cap)?;
            clear_ambient_capability_set().map_err(|e| format!("ambient capabilities: {e}"))?;
            empty_sets()?;
        }
    }
    verify(identity)
}

fn lock_securebits() -> Result<(), String> {
    let bits = CapabilitiesSecureBits::NO_ROOT
        | CapabilitiesSecureBits::NO_ROOT_LOCKED
        | CapabilitiesSecureBits::NO_SETUID_FIXUP_LOCKED
        | CapabilitiesSecureBits::KEEP_CAPS_LOCKED
        | CapabilitiesSecureBits::NO_CAP_AMBIENT_RAISE
        | CapabilitiesSecureBits::NO_CAP_AMBIENT_RAISE_LOCKED;
    set_capabilities_secure_bits(bits).map_err(|e| format!("securebits: {e}"))
}

fn empty_bounding_set(last_cap: u32) -> Result<(), String> {
    for cap in 0..=last_cap.min(63) {
        remove_capability_from_bounding_set(CapabilitySet::from_bits_retain(1 << cap))
            .map_err(|e| format!("dropping capability {cap} from the bounding set: {e}"))?;
    }
    Ok(())
}

fn empty_sets() -> Result<(), String> {
    set_capabilities(
        None,
        CapabilitySets {
            effective: CapabilitySet::empty(),
            permitted: CapabilitySet::empty(),
            inheritable: CapabilitySet::empty(),
        },
    )
    .map_err(|e| format!("capset: {e}"))
}

/// Read the result back from the kernel: every capability set empty (the bounding set too,
/// unless we kept the caller's identity), and the ids are the ones asked for.
fn verify(identity: &Identity) -> Result<(), String> {
    let status =
        fs::read_to_string("/proc/self/status").map_err(|e| format!("/proc/self/status: {e}"))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
            .unwrap_or("?")
            .to_string()
    };
    let mut sets = vec!["CapInh:", "CapPrm:", "CapEff:", "CapAmb:"];
    if !matches!(identity, Identity::Caller) {
        sets.push("CapBnd:");
    }
    for name in sets {
        let value = field(name);
        if u64::from_str_radix(&value, 16) != Ok(0) {
            return Err(format!("{name} is {value} after dropping privileges"));
        }
    }
    if let Identity::Ids { uid, gid } = identity {
        let ids = |name: &str, want: u32| {
            let value = field(name);
            let all = value.split_whitespace().all(|v| v == want.to_string());
            (all && !value.is_empty())
                .then_some(())
                .ok_or_else(|| format!("{name} is {value}, expected {want}"))
        };
        ids("Uid:", *uid)?;
        ids("Gid:", *gid)?;
        if !field("Groups:").is_empty() {
            return Err(format!("supplementary groups left: {}", field("Groups:")));
        }
    }
    Ok(())
}
