//! The tree and the items' names, as mdtest lays them out: a run's iteration works in
//! `test-dir.{iteration}-0`; the tree's root is `mdtest_tree.0` (shared) or
//! `mdtest_tree.{client}.0` (a tree per client), its folders are numbered breadth first
//! (folder f's children are `f*B+1 ..= f*B+B`) and named `{base}.{f}`; client c's items are
//! `file.mdtest.{c}.{n}` and `dir.mdtest.{c}.{n}`, item n living in folder `n / per_folder`.

use crate::plan::{ItemCount, Layout, TreeShape};
use std::fmt::Write;

/// The tree's counts, resolved from the plan as mdtest resolves -n, -I, -z, -b and -L.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Folders in one tree, its root included (mdtest's `num_dirs_in_tree`).
    pub folders: u64,
    /// Folders that hold items: all of them, or the leaves alone.
    pub holding: u64,
    /// The first folder that holds items (0, or the first leaf).
    pub first_holding: u64,
    /// Items of one client in each holding folder (mdtest's `items_per_dir`).
    pub per_folder: u64,
    /// Items of one client in all (a multiple of `per_folder`).
    pub per_client: u64,
}

/// Why a shape has no counts: too many folders, or none of the items per folder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// B^(D+1) does not fit in 64 bits.
    #[error("a tree of depth {depth} and branching {branch} has more folders than can be counted")]
    TooManyFolders {
        /// Depth asked for.
        depth: u32,
        /// Branching asked for.
        branch: u32,
    },
    /// `--items N` over more holding folders than N.
    #[error("{items} items per client over {holding} folders leave none per folder")]
    NonePerFolder {
        /// Items asked for.
        items: u64,
        /// Folders that hold items.
        holding: u64,
    },
}

impl Counts {
    /// The counts of `tree` holding `items`.
    pub fn of(tree: &TreeShape, items: ItemCount) -> Result<Counts, ShapeError> {
        let too_many = ShapeError::TooManyFolders { depth: tree.depth, branch: tree.branch };
        let branch = u64::from(tree.branch.max(1));
        let leaves = branch.checked_pow(tree.depth).ok_or(too_many.clone())?;
        let folders = if branch == 1 {
            u64::from(tree.depth) + 1
        } else {
            (branch.checked_pow(tree.depth + 1).ok_or(too_many)? - 1) / (branch - 1)
        };
        let holding = if tree.leaves_only { leaves } else { folders };
        let first_holding = folders - holding;
        let per_folder = match items {
            ItemCount::PerFolder(n) => n,
            ItemCount::PerClient(n) => n / holding,
        };
        if per_folder == 0 {
            if let ItemCount::PerClient(items) = items {
                return Err(ShapeError::NonePerFolder { items, holding });
            }
        }
        Ok(Counts { folders, holding, first_holding, per_folder, per_client: per_folder * holding })
    }
}

/// The name of the tree's folder `f` below the tree's root, `base.a/base.b/.../base.f`
/// (empty for the root itself), as mdtest walks up from `f`.
pub fn folder_below_root(base: &str, f: u64, branch: u64) -> String {
    if f == 0 {
        return String::new();
    }
    let mut parts = vec![f];
    let mut p = f;
    while p > branch {
        p = (p - 1) / branch;
        parts.push(p);
    }
    parts.iter().rev().map(|p| format!("{base}.{p}")).collect::<Vec<_>>().join("/")
}

/// The names of one client's view of a tree: where its root is and how its folders are named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeNames {
    /// `mdtest_tree` (shared) or `mdtest_tree.{c}` (a tree per client).
    pub base: String,
}

impl TreeNames {
    /// The tree that holds `owner`'s items under `layout`.
    pub fn of(layout: Layout, owner: usize) -> TreeNames {
        match layout {
            Layout::Shared => TreeNames { base: "mdtest_tree".into() },
            Layout::PerClient => TreeNames { base: format!("mdtest_tree.{owner}") },
        }
    }

    /// The root's name, `{base}.0`.
    pub fn root(&self) -> String {
        format!("{}.0", self.base)
    }

    /// Every folder of the tree below `top` (a folder holding `test-dir`), root first, each
    /// parent before its children: the order they are made in.
    pub fn folders(&self, top: &str, counts: &Counts, branch: u64) -> Vec<String> {
        (0..counts.folders).map(|f| self.folder(top, f, branch)).collect()
    }

    /// Folder `f`'s path below `top`.
    pub fn folder(&self, top: &str, f: u64, branch: u64) -> String {
        let below = folder_below_root(&self.base, f, branch);
        if below.is_empty() {
            format!("{top}/{}", self.root())
        } else {
            format!("{top}/{}/{below}", self.root())
        }
    }
}

/// An item's kind, the first part of its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `file.mdtest.{c}.{n}`.
    File,
    /// `dir.mdtest.{c}.{n}`.
    Dir,
}

/// Client `owner`'s items of one kind in one tree, their paths written into a reused buffer
/// (no allocation per item once the buffer has grown).
pub struct ItemNames {
    /// The path of every holding folder, by its index among them.
    holding: Vec<String>,
    /// `file.mdtest.{owner}.` or `dir.mdtest.{owner}.`.
    prefix: String,
    per_folder: u64,
    /// mdtest numbers items from the first holding folder's number (its `-L` offset).
    first: u64,
}

impl ItemNames {
    /// `owner`'s items of `kind` in the tree `names` below `top`.
    pub fn new(top: &str, names: &TreeNames, counts: &Counts, branch: u64, kind: Kind, owner: usize) -> ItemNames {
        let holding = (counts.first_holding..counts.folders).map(|f| names.folder(top, f, branch)).collect::<Vec<_>>();
        let word = match kind {
            Kind::File => "file",
            Kind::Dir => "dir",
        };
        ItemNames {
            holding,
            prefix: format!("{word}.mdtest.{owner}."),
            per_folder: counts.per_folder.max(1),
            first: counts.first_holding,
        }
    }

    /// Writes item `i`'s path (0-based among the owner's items) into `out`, after clearing it.
    pub fn write(&self, i: u64, out: &mut String) {
        out.clear();
        let folder = (i / self.per_folder) as usize;
        let number = i + self.per_folder * self.first;
        out.push_str(&self.holding[folder.min(self.holding.len() - 1)]);
        out.push('/');
        out.push_str(&self.prefix);
        let _ = write!(out, "{number}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(depth: u32, branch: u32, leaves_only: bool) -> TreeShape {
        TreeShape { depth, branch, leaves_only }
    }

    #[test]
    fn counts_follow_mdtests_rules() {
        // -z 2 -b 4 -I 100: 1 + 4 + 16 folders, 100 items in each.
        let c = Counts::of(&tree(2, 4, false), ItemCount::PerFolder(100)).unwrap();
        assert_eq!((c.folders, c.holding, c.first_holding, c.per_client), (21, 21, 0, 2100));
        // -L: the 16 leaves alone, from folder 5 on.
        let c = Counts::of(&tree(2, 4, true), ItemCount::PerFolder(100)).unwrap();
        assert_eq!((c.folders, c.holding, c.first_holding, c.per_client), (21, 16, 5, 1600));
        // -n 1000 over 21 folders: 47 each, 987 in all (mdtest rounds down).
        let c = Counts::of(&tree(2, 4, false), ItemCount::PerClient(1000)).unwrap();
        assert_eq!((c.per_folder, c.per_client), (47, 987));
        // A chain: -z 3 -b 1 has 4 folders.
        assert_eq!(Counts::of(&tree(3, 1, false), ItemCount::PerClient(8)).unwrap().folders, 4);
        assert!(matches!(
            Counts::of(&tree(2, 4, false), ItemCount::PerClient(5)),
            Err(ShapeError::NonePerFolder { holding: 21, .. })
        ));
        assert!(Counts::of(&tree(40, 1000, false), ItemCount::PerClient(5)).is_err());
    }

    #[test]
    fn folders_and_items_are_named_as_mdtest_names_them() {
        assert_eq!(folder_below_root("mdtest_tree", 0, 4), "");
        assert_eq!(folder_below_root("mdtest_tree", 3, 4), "mdtest_tree.3");
        // Folder 7 is the 2nd child of folder 1 with -b 4.
        assert_eq!(folder_below_root("mdtest_tree", 7, 4), "mdtest_tree.1/mdtest_tree.7");
        let names = TreeNames::of(Layout::PerClient, 2);
        assert_eq!(names.folder("/t", 0, 2), "/t/mdtest_tree.2.0");
        assert_eq!(names.folder("/t", 4, 2), "/t/mdtest_tree.2.0/mdtest_tree.2.1/mdtest_tree.2.4");
        let counts = Counts::of(&tree(1, 2, true), ItemCount::PerFolder(3)).unwrap();
        let items = ItemNames::new("/t", &TreeNames::of(Layout::Shared, 0), &counts, 2, Kind::File, 1);
        let mut out = String::new();
        items.write(0, &mut out);
        assert_eq!(out, "/t/mdtest_tree.0/mdtest_tree.1/file.mdtest.1.3");
        items.write(5, &mut out);
        assert_eq!(out, "/t/mdtest_tree.0/mdtest_tree.2/file.mdtest.1.8");
    }
}
