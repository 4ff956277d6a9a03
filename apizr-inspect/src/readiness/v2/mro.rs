//! Method resolution orders of the classes v2 proves, so that a class with several bases is
//! accepted only when Python can linearise them (C3; `TypeError: Cannot create a consistent
//! method resolution order` otherwise).
//!
//! A class's [`Lineage`] is its MRO as v2 knows it: the module's classes by identity (module,
//! name, position), standard-library bases by qualified name (`abc.ABC`, `typing.Generic`;
//! `typing.Protocol` brings `typing.Generic`), `object` left out. The ancestors of a builtin
//! or io base are left out too: such a base brings an instance layout, and a class has at
//! most one base with a layout ([`super::class`]), so no other base can name them. A builtin
//! exception brings its whole chain up to `BaseException` ([`super::exceptions`]): several
//! exception bases may share a layout, and their order must merge. A class of the generated
//! stdlib table ([`super::stdlib_classes`]) brings its whole MRO, by `module.qualname`.

use std::hash::{DefaultHasher, Hash, Hasher};

/// The longest MRO v2 records; a longer one is not proved.
pub const MAX: usize = 12;

/// A class's MRO (without `object`), outermost last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lineage {
    ids: [u64; MAX],
    len: u8,
}

impl Lineage {
    /// A standard-library base by its qualified name (`typing.Protocol` with `Generic`).
    pub fn stdlib(qualified: &str) -> Lineage {
        let mut out = Lineage::default();
        // A builtin exception: its chain up to `BaseException`, aliases resolved
        // ([`super::exceptions`]), since several exception bases may combine.
        let chain = qualified
            .strip_prefix("builtins.")
            .map(super::exceptions::ancestors)
            .unwrap_or_default();
        if !chain.is_empty() {
            for name in chain {
                out.push(id(&["stdlib", &format!("builtins.{name}")]));
            }
            return out;
        }
        out.push(id(&["stdlib", qualified]));
        if qualified == "typing.Protocol" {
            out.push(id(&["stdlib", "typing.Generic"]));
        }
        out
    }

    /// A class of the generated table ([`super::stdlib_classes`]): its whole MRO by the
    /// classes' `module.qualname` (at most [`MAX`] classes).
    pub fn table(class: &super::stdlib_classes::StdlibClass) -> Option<Lineage> {
        let mut out = Lineage::default();
        for key in &class.mro {
            if !out.push(id(&["stdlib", key])) {
                return None;
            }
        }
        Some(out)
    }

    /// `typing.Generic` is in the MRO.
    pub fn has_generic(&self) -> bool {
        self.as_slice().contains(&id(&["stdlib", "typing.Generic"]))
    }

    fn push(&mut self, class: u64) -> bool {
        match self.ids.get_mut(usize::from(self.len)) {
            Some(slot) => {
                *slot = class;
                self.len += 1;
                true
            }
            None => false,
        }
    }

    fn as_slice(&self) -> &[u64] {
        &self.ids[..usize::from(self.len)]
    }

    /// The MRO of a class of `module` named `name` (defined at `start`) with these bases:
    /// the class, then the C3 merge of the bases' lineages and the bases in order. `None`
    /// when Python cannot linearise them, or the result is longer than [`MAX`].
    pub fn of_class(module: &str, name: &str, start: u32, bases: &[Lineage]) -> Option<Lineage> {
        let mut out = Lineage::default();
        out.push(id(&["class", module, name, &start.to_string()]));
        let heads: Vec<u64> = bases
            .iter()
            .filter_map(|b| b.as_slice().first().copied())
            .collect();
        let mut seqs: Vec<Vec<u64>> = bases.iter().map(|b| b.as_slice().to_vec()).collect();
        seqs.push(heads);
        loop {
            seqs.retain(|s| !s.is_empty());
            if seqs.is_empty() {
                return Some(out);
            }
            // The first head that is in no other sequence's tail.
            let next = seqs
                .iter()
                .map(|s| s[0])
                .find(|head| !seqs.iter().any(|s| s[1..].contains(head)))?;
            if !out.push(next) {
                return None;
            }
            for seq in &mut seqs {
                if seq.first() == Some(&next) {
                    seq.remove(0);
                }
            }
        }
    }
}

fn id(parts: &[&str]) -> u64 {
    let mut hasher = DefaultHasher::new();
    parts.hash(&mut hasher);
    hasher.finish()
}
