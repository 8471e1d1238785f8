//! The in-memory tree: inodes in an arena, POSIX path resolution, an
//! unprivileged user's permissions, quotas.
//!
//! This is plain data with no wasmtime types, so every rule (`..` stops at
//! the root, symlinks resolve inside the tree, quotas refuse growth, a
//! `chmod 000` file cannot be read) is unit-tested directly. The sandbox's
//! whole filesystem is one `Tree`: there is no host path anywhere, so
//! nothing can be reached outside it and nothing is left on the host disk
//! when it is dropped.
//!
//! Every node has an owner: `root` for the system's layout (`/etc`, `/usr`,
//! `/dev`, …), the sandbox user for what its programs create. Whoever acts
//! on the tree (`actor`) is checked as Linux checks a process of that user:
//! search permission on every folder of a path, write permission on the
//! folder to create or remove in it, the sticky bit of `/tmp`, only the
//! owner may `chmod`. Root (the host laying out the system) is not checked.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::error::FsErr;
use super::file_bytes::FileBytes;

/// Index of a node in the arena. The root is always node 0.
pub type NodeId = usize;

/// The root folder of every tree.
pub const ROOT: NodeId = 0;

/// Symlinks followed in one resolution before giving up with ELOOP (Linux's
/// limit, `MAXSYMLINKS`).
const MAX_SYMLINK_HOPS: u32 = 40;

/// The longest name of one path component (Linux's `NAME_MAX`).
const NAME_MAX: usize = 255;

/// The owner of the system's layout.
pub const ROOT_UID: u32 = 0;
/// The sandbox's one user, `worker`: the owner of what its programs make.
pub const SANDBOX_UID: u32 = 1000;

/// Permission bits asked for, as `access(2)` takes them.
pub const MAY_READ: u32 = 4;
/// Write permission.
pub const MAY_WRITE: u32 = 2;
/// Execute (for a folder: search) permission.
pub const MAY_EXEC: u32 = 1;

/// The sticky bit: in such a folder only a file's owner may remove it.
const S_ISVTX: u32 = 0o1000;

/// POSIX file-type bits of `st_mode`, as `fs-meta.get-mode` reports them.
pub const S_IFREG: u32 = 0o100_000;
/// The type bits of a folder.
pub const S_IFDIR: u32 = 0o040_000;
/// The type bits of a symlink.
pub const S_IFLNK: u32 = 0o120_000;
pub const S_IFCHR: u32 = 0o020_000;

/// What a node holds.
#[derive(Debug, Clone)]
pub enum NodeKind {
    /// A file's bytes, shared copy-on-write: a sandbox cloned from the
    /// system layout shares its files (tens of MB of python's library)
    /// until it writes one.
    File(FileBytes),
    /// A folder.
    Dir {
        /// Its entries by name, without `.` and `..`.
        entries: BTreeMap<String, NodeId>,
        /// The folder it is in (the root's is itself): where `..` leads.
        parent: NodeId,
    },
    /// A symlink and its target, resolved when the path is.
    Symlink(String),
    /// `/dev/null`: reads end at once, writes vanish.
    Null,
    /// `/dev/zero`: reads give zeros, writes vanish.
    Zero,
    /// `/dev/full`: reads give zeros, writes fail with ENOSPC.
    Full,
    /// `/dev/random`, `/dev/urandom`: reads give the kernel's random bytes.
    Random,
    /// `/dev/stdin` (0), `/dev/stdout` (1), `/dev/stderr` (2) and
    /// `/dev/fd/N`: the streams of whichever program opens them (see
    /// `wasi.rs`); the tree itself holds nothing.
    Stdio(u8),
}

/// The type of a node, without its contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeType {
    /// A regular file.
    File,
    /// A folder.
    Dir,
    /// A symlink.
    Symlink,
    /// One of the devices under `/dev`.
    CharDevice,
}

#[derive(Debug, Clone)]
pub struct Node {
    pub kind: NodeKind,
    /// Permission bits only (0o7777); the type comes from `kind`.
    pub mode: u32,
    /// The owner (and group: each user has a group of its own number).
    pub uid: u32,
    /// Directory entries naming this node.
    links: u32,
    /// Open descriptors; an unlinked file lives on while one is open.
    opens: u32,
    pub atime: Duration,
    pub mtime: Duration,
    pub ctime: Duration,
}

/// What `stat` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// What the node is.
    pub node_type: NodeType,
    /// Permission bits only (0o7777).
    pub mode: u32,
    /// The owner, who is also the group.
    pub uid: u32,
    /// Names of the node; for a folder, 2 plus its subfolders.
    pub link_count: u64,
    /// Bytes of a file or a symlink's target; 4096 for a folder, 0 for a
    /// device.
    pub size: u64,
    /// Last read, since the Unix epoch.
    pub atime: Duration,
    /// Last written, since the Unix epoch.
    pub mtime: Duration,
    /// Last changed (contents, mode or names), since the Unix epoch.
    pub ctime: Duration,
}

/// Caps on what one sandbox may store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// Bytes of file contents and symlink targets, all files together.
    pub max_bytes: u64,
    /// Files, folders and symlinks, all together.
    pub max_nodes: u64,
}

impl Quota {
    /// No limit: for laying out the system before the real quota starts.
    pub const UNLIMITED: Quota = Quota {
        max_bytes: u64::MAX,
        max_nodes: u64::MAX,
    };
}

/// Which quota refused a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuotaHit {
    /// The byte quota, `max_bytes`.
    Bytes,
    /// The quota of files, `max_nodes`.
    Nodes,
}

/// How a timestamp is to be set.
#[derive(Debug, Clone, Copy)]
pub enum TimeSet {
    /// Left as it is.
    Keep,
    /// The current time.
    Now,
    /// This time, since the Unix epoch.
    At(Duration),
}

/// How `open` treats the final path component.
#[derive(Debug, Clone, Copy)]
pub struct OpenSpec {
    /// A symlink as the last component is followed.
    pub follow: bool,
    /// A missing file is created (`O_CREAT`).
    pub create: bool,
    /// With `create`: fails if it exists (`O_EXCL`).
    pub exclusive: bool,
    /// A file is emptied (`O_TRUNC`).
    pub truncate: bool,
    /// Only a folder will do (`O_DIRECTORY`).
    pub directory: bool,
    /// Opened for reading (a folder: for listing) or writing; checked
    /// against the node's permissions.
    pub read: bool,
    /// Opened for writing.
    pub write: bool,
    /// Permission bits of a file it creates (the umask already applied).
    pub mode: u32,
}

impl Default for OpenSpec {
    fn default() -> OpenSpec {
        OpenSpec {
            follow: false,
            create: false,
            exclusive: false,
            truncate: false,
            directory: false,
            read: false,
            write: false,
            mode: 0o644,
        }
    }
}

/// Cloning a tree copies every node: how each sandbox gets its own copy
/// of the runtime's system layout.
#[derive(Clone)]
pub struct Tree {
    nodes: Vec<Option<Node>>,
    free: Vec<NodeId>,
    quota: Quota,
    used_bytes: u64,
    used_nodes: u64,
    /// Usage that does not count against the quota: the system layout
    /// made before the sandbox was handed out.
    baseline: (u64, u64),
    quota_hit: Option<QuotaHit>,
    /// Who acts on the tree: owns what is created, is checked.
    actor: u32,
}

pub fn now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

impl Tree {
    /// An empty tree: just the root folder.
    pub fn new(quota: Quota) -> Tree {
        let t = now();
        let root = Node {
            kind: NodeKind::Dir {
                entries: BTreeMap::new(),
                parent: ROOT,
            },
            mode: 0o755,
            uid: ROOT_UID,
            links: 1,
            opens: 0,
            atime: t,
            mtime: t,
            ctime: t,
        };
        Tree {
            nodes: vec![Some(root)],
            free: Vec::new(),
            quota,
            used_bytes: 0,
            used_nodes: 1,
            baseline: (0, 0),
            quota_hit: None,
            actor: ROOT_UID,
        }
    }

    /// From now on `uid` acts on the tree (owns what is made, is checked).
    pub fn set_actor(&mut self, uid: u32) {
        self.actor = uid;
    }

    /// Whether the actor may `want` (`MAY_READ | MAY_WRITE | MAY_EXEC`)
    /// node `id`: the owner's bits for its owner, the others' for the rest.
    pub fn may(&self, id: NodeId, want: u32) -> Result<bool, FsErr> {
        let node = self.node(id)?;
        if self.actor == ROOT_UID {
            return Ok(true);
        }
        let bits = if node.uid == self.actor {
            (node.mode >> 6) & 7
        } else {
            node.mode & 7
        };
        Ok(bits & want == want)
    }

    /// `may`, as an error (EACCES) when not.
    fn require(&self, id: NodeId, want: u32) -> Result<(), FsErr> {
        if self.may(id, want)? {
            Ok(())
        } else {
            Err(FsErr::Access)
        }
    }

    /// To add or remove a name in folder `dir`: write and search on it.
    fn require_dir_write(&self, dir: NodeId) -> Result<(), FsErr> {
        self.require(dir, MAY_WRITE | MAY_EXEC)
    }

    /// To remove or replace `id` in `dir`: besides write on `dir`, in a
    /// sticky folder (`/tmp`) the actor must own the file or the folder.
    fn require_removable(&self, dir: NodeId, id: NodeId) -> Result<(), FsErr> {
        self.require_dir_write(dir)?;
        let folder = self.node(dir)?;
        let sticky = folder.mode & S_ISVTX != 0;
        if self.actor != ROOT_UID
            && sticky
            && self.node(id)?.uid != self.actor
            && folder.uid != self.actor
        {
            return Err(FsErr::NotPermitted);
        }
        Ok(())
    }

    /// Only the owner (or root) may change a node's mode and times.
    fn require_owner(&self, id: NodeId) -> Result<(), FsErr> {
        if self.actor == ROOT_UID || self.node(id)?.uid == self.actor {
            Ok(())
        } else {
            Err(FsErr::NotPermitted)
        }
    }

    /// The first quota that refused a change, if any did.
    pub fn quota_hit(&self) -> Option<QuotaHit> {
        self.quota_hit
    }

    /// The quota in force.
    pub fn quota(&self) -> Quota {
        self.quota
    }

    /// Bytes and nodes in use, beyond the exempt layout.
    pub fn usage(&self) -> (u64, u64) {
        (
            self.used_bytes.saturating_sub(self.baseline.0),
            self.used_nodes.saturating_sub(self.baseline.1),
        )
    }

    /// Puts `quota` in force from now on, for what is added from now on:
    /// the system's own files, laid out before, are not the guest's to pay
    /// for.
    pub fn start_quota(&mut self, quota: Quota) {
        self.quota = quota;
        self.baseline = (self.used_bytes, self.used_nodes);
    }

    /// Node `id`; `BadDescriptor` if it has been freed.
    pub fn node(&self, id: NodeId) -> Result<&Node, FsErr> {
        self.nodes
            .get(id)
            .and_then(Option::as_ref)
            .ok_or(FsErr::BadDescriptor)
    }

    fn node_mut(&mut self, id: NodeId) -> Result<&mut Node, FsErr> {
        self.nodes
            .get_mut(id)
            .and_then(Option::as_mut)
            .ok_or(FsErr::BadDescriptor)
    }

    /// What node `id` is.
    pub fn node_type(&self, id: NodeId) -> Result<NodeType, FsErr> {
        Ok(match self.node(id)?.kind {
            NodeKind::File(_) => NodeType::File,
            NodeKind::Dir { .. } => NodeType::Dir,
            NodeKind::Symlink(_) => NodeType::Symlink,
            NodeKind::Null
            | NodeKind::Zero
            | NodeKind::Full
            | NodeKind::Random
            | NodeKind::Stdio(_) => NodeType::CharDevice,
        })
    }

    /// The stream a `Stdio` node stands for (0, 1, 2), if it is one.
    pub fn stdio_of(&self, id: NodeId) -> Result<Option<u8>, FsErr> {
        Ok(match self.node(id)?.kind {
            NodeKind::Stdio(fd) => Some(fd),
            _ => None,
        })
    }

    fn entries(&self, dir: NodeId) -> Result<&BTreeMap<String, NodeId>, FsErr> {
        match &self.node(dir)?.kind {
            NodeKind::Dir { entries, .. } => Ok(entries),
            _ => Err(FsErr::NotDirectory),
        }
    }

    fn entries_mut(&mut self, dir: NodeId) -> Result<&mut BTreeMap<String, NodeId>, FsErr> {
        match &mut self.node_mut(dir)?.kind {
            NodeKind::Dir { entries, .. } => Ok(entries),
            _ => Err(FsErr::NotDirectory),
        }
    }

    fn parent_of(&self, dir: NodeId) -> Result<NodeId, FsErr> {
        match &self.node(dir)?.kind {
            NodeKind::Dir { parent, .. } => Ok(*parent),
            _ => Err(FsErr::NotDirectory),
        }
    }

    // ---- quotas ----

    fn charge_bytes(&mut self, grow: u64) -> Result<(), FsErr> {
        let total = self.used_bytes.checked_add(grow).ok_or(FsErr::NoSpace)?;
        if total.saturating_sub(self.baseline.0) > self.quota.max_bytes {
            self.quota_hit.get_or_insert(QuotaHit::Bytes);
            return Err(FsErr::NoSpace);
        }
        self.used_bytes = total;
        Ok(())
    }

    fn alloc(&mut self, kind: NodeKind, mode: u32) -> Result<NodeId, FsErr> {
        if self.used_nodes.saturating_sub(self.baseline.1) >= self.quota.max_nodes {
            self.quota_hit.get_or_insert(QuotaHit::Nodes);
            return Err(FsErr::Quota);
        }
        if let NodeKind::Symlink(target) = &kind {
            self.charge_bytes(target.len() as u64)?;
        }
        self.used_nodes += 1;
        let t = now();
        let node = Node {
            kind,
            mode,
            uid: self.actor,
            links: 0,
            opens: 0,
            atime: t,
            mtime: t,
            ctime: t,
        };
        Ok(match self.free.pop() {
            Some(id) => {
                self.nodes[id] = Some(node);
                id
            }
            None => {
                self.nodes.push(Some(node));
                self.nodes.len() - 1
            }
        })
    }

    /// Frees a node once no entry names it and no descriptor holds it.
    fn release_if_orphan(&mut self, id: NodeId) {
        let Ok(node) = self.node(id) else { return };
        if id == ROOT || node.links > 0 || node.opens > 0 {
            return;
        }
        let bytes = match &node.kind {
            NodeKind::File(data) => data.len() as u64,
            NodeKind::Symlink(target) => target.len() as u64,
            _ => 0,
        };
        self.used_bytes = self.used_bytes.saturating_sub(bytes);
        self.used_nodes = self.used_nodes.saturating_sub(1);
        self.nodes[id] = None;
        self.free.push(id);
    }

    /// A descriptor now refers to `id`.
    pub fn retain(&mut self, id: NodeId) -> Result<(), FsErr> {
        self.node_mut(id)?.opens += 1;
        Ok(())
    }

    /// A descriptor of `id` was closed.
    pub fn release(&mut self, id: NodeId) {
        if let Ok(node) = self.node_mut(id) {
            node.opens = node.opens.saturating_sub(1);
        }
        self.release_if_orphan(id);
    }

    // ---- path resolution ----

    /// Resolves `path` from folder `start` (from the root if it is absolute).
    /// `follow` says whether a symlink as the last component is followed.
    pub fn lookup(&self, start: NodeId, path: &str, follow: bool) -> Result<NodeId, FsErr> {
        if path.is_empty() {
            return Err(FsErr::NoEntry);
        }
        let mut pending: Vec<String> = path.split('/').rev().map(str::to_owned).collect();
        let mut cur = if path.starts_with('/') { ROOT } else { start };
        let mut hops = 0;
        while let Some(comp) = pending.pop() {
            match comp.as_str() {
                "" | "." => {
                    self.entries(cur)?;
                }
                ".." => {
                    self.entries(cur)?;
                    self.require(cur, MAY_EXEC)?;
                    cur = self.parent_of(cur)?;
                }
                name => {
                    check_name(name)?;
                    let entries = self.entries(cur)?;
                    self.require(cur, MAY_EXEC)?;
                    let child = *entries.get(name).ok_or(FsErr::NoEntry)?;
                    let is_last = pending.is_empty();
                    if let NodeKind::Symlink(target) = &self.node(child)?.kind
                        && (!is_last || follow)
                    {
                        hops += 1;
                        if hops > MAX_SYMLINK_HOPS {
                            return Err(FsErr::Loop);
                        }
                        if target.starts_with('/') {
                            cur = ROOT;
                        }
                        pending.extend(target.split('/').rev().map(str::to_owned));
                        continue;
                    }
                    cur = child;
                }
            }
        }
        Ok(cur)
    }

    /// Splits `path` into its folder (resolved, symlinks followed) and its
    /// last component, for calls that create or remove that component.
    pub fn lookup_parent(&self, start: NodeId, path: &str) -> Result<(NodeId, String), FsErr> {
        let trimmed = path.trim_end_matches('/');
        if trimmed.is_empty() {
            // "/" or "": there is no last component to create or remove.
            return Err(if path.is_empty() {
                FsErr::NoEntry
            } else {
                FsErr::Busy
            });
        }
        let (dir_part, name) = match trimmed.rfind('/') {
            Some(i) => (&trimmed[..=i], &trimmed[i + 1..]),
            None => ("", trimmed),
        };
        check_name(name)?;
        let dir = if dir_part.is_empty() {
            start
        } else {
            self.lookup(start, dir_part, true)?
        };
        self.entries(dir)?;
        Ok((dir, name.to_owned()))
    }

    fn child(&self, dir: NodeId, name: &str) -> Result<Option<NodeId>, FsErr> {
        Ok(self.entries(dir)?.get(name).copied())
    }

    // ---- creating and removing ----

    fn insert(&mut self, dir: NodeId, name: &str, id: NodeId) -> Result<(), FsErr> {
        self.entries_mut(dir)?.insert(name.to_owned(), id);
        self.node_mut(id)?.links += 1;
        self.touch_dir(dir)
    }

    fn touch_dir(&mut self, dir: NodeId) -> Result<(), FsErr> {
        let t = now();
        let node = self.node_mut(dir)?;
        node.mtime = t;
        node.ctime = t;
        Ok(())
    }

    /// Opens (and maybe creates) the node at `path`; returns its id.
    pub fn open(&mut self, start: NodeId, path: &str, spec: OpenSpec) -> Result<NodeId, FsErr> {
        let id = match self.lookup(start, path, spec.follow) {
            Ok(_) if spec.create && spec.exclusive => return Err(FsErr::Exists),
            Ok(id) => id,
            Err(FsErr::NoEntry) if spec.create => {
                if spec.directory {
                    return Err(FsErr::Invalid);
                }
                let (dir, name) = self.create_target(start, path)?;
                self.require_dir_write(dir)?;
                let id = self.alloc(NodeKind::File(FileBytes::default()), spec.mode & 0o7777)?;
                self.insert(dir, &name, id)?;
                // A new file may be written by its creator whatever its
                // mode says, as with open(O_CREAT) on Linux.
                return Ok(id);
            }
            Err(e) => return Err(e),
        };
        let want = (if spec.read { MAY_READ } else { 0 })
            | (if spec.write || spec.truncate {
                MAY_WRITE
            } else {
                0
            });
        if want != 0 && self.node_type(id)? != NodeType::Symlink {
            self.require(id, want)?;
        }
        match self.node_type(id)? {
            NodeType::Symlink => return Err(FsErr::Loop),
            NodeType::Dir if spec.truncate => return Err(FsErr::IsDirectory),
            NodeType::Dir => {}
            _ if spec.directory => return Err(FsErr::NotDirectory),
            NodeType::File if spec.truncate => self.set_size(id, 0)?,
            _ => {}
        }
        Ok(id)
    }

    /// Where a new file for `path` goes: its folder and name, following a
    /// dangling symlink at the end as `open(O_CREAT)` does on Linux.
    fn create_target(&self, start: NodeId, path: &str) -> Result<(NodeId, String), FsErr> {
        let (dir, name) = self.lookup_parent(start, path)?;
        if path.ends_with('/') {
            return Err(FsErr::IsDirectory);
        }
        match self.child(dir, &name)? {
            Some(link) => match &self.node(link)?.kind {
                NodeKind::Symlink(target) => {
                    let target = target.clone();
                    self.lookup_parent(dir, &target)
                }
                _ => Err(FsErr::Exists),
            },
            None => Ok((dir, name)),
        }
    }

    /// mkdir(2) with mode 0o755.
    pub fn mkdir(&mut self, start: NodeId, path: &str) -> Result<NodeId, FsErr> {
        self.mkdir_mode(start, path, 0o755)
    }

    /// mkdir(2) with the permission bits `mode` (the umask already applied).
    pub fn mkdir_mode(&mut self, start: NodeId, path: &str, mode: u32) -> Result<NodeId, FsErr> {
        let (dir, name) = self.lookup_parent(start, path)?;
        if self.child(dir, &name)?.is_some() {
            return Err(FsErr::Exists);
        }
        self.require_dir_write(dir)?;
        let id = self.alloc(
            NodeKind::Dir {
                entries: BTreeMap::new(),
                parent: dir,
            },
            mode & 0o7777,
        )?;
        self.insert(dir, &name, id)?;
        Ok(id)
    }

    /// symlink(2): `path` made a symlink to `target`, which need not exist.
    pub fn symlink(&mut self, target: &str, start: NodeId, path: &str) -> Result<(), FsErr> {
        if target.is_empty() {
            return Err(FsErr::NoEntry);
        }
        let (dir, name) = self.lookup_parent(start, path)?;
        if self.child(dir, &name)?.is_some() {
            return Err(FsErr::Exists);
        }
        self.require_dir_write(dir)?;
        let id = self.alloc(NodeKind::Symlink(target.to_owned()), 0o777)?;
        self.insert(dir, &name, id)
    }

    /// A hard link: only files may have several names, as on Linux.
    pub fn link(
        &mut self,
        old_start: NodeId,
        old_path: &str,
        follow: bool,
        new_start: NodeId,
        new_path: &str,
    ) -> Result<(), FsErr> {
        let id = self.lookup(old_start, old_path, follow)?;
        if self.node_type(id)? == NodeType::Dir {
            return Err(FsErr::NotPermitted);
        }
        let (dir, name) = self.lookup_parent(new_start, new_path)?;
        if self.child(dir, &name)?.is_some() {
            return Err(FsErr::Exists);
        }
        self.require_dir_write(dir)?;
        self.insert(dir, &name, id)?;
        self.node_mut(id)?.ctime = now();
        Ok(())
    }

    fn detach(&mut self, dir: NodeId, name: &str) -> Result<NodeId, FsErr> {
        let id = self.entries_mut(dir)?.remove(name).ok_or(FsErr::NoEntry)?;
        let node = self.node_mut(id)?;
        node.links = node.links.saturating_sub(1);
        node.ctime = now();
        self.touch_dir(dir)?;
        Ok(id)
    }

    /// unlink(2): removes the name of anything but a folder; an open file lives
    /// on.
    pub fn unlink(&mut self, start: NodeId, path: &str) -> Result<(), FsErr> {
        let (dir, name) = self.lookup_parent(start, path)?;
        let id = self.child(dir, &name)?.ok_or(FsErr::NoEntry)?;
        if self.node_type(id)? == NodeType::Dir {
            return Err(FsErr::IsDirectory);
        }
        if path.ends_with('/') {
            return Err(FsErr::NotDirectory);
        }
        self.require_removable(dir, id)?;
        self.detach(dir, &name)?;
        self.release_if_orphan(id);
        Ok(())
    }

    /// rmdir(2): removes an empty folder.
    pub fn rmdir(&mut self, start: NodeId, path: &str) -> Result<(), FsErr> {
        let last = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        if last == "." {
            return Err(FsErr::Invalid);
        }
        if last == ".." {
            return Err(FsErr::NotEmpty);
        }
        let (dir, name) = self.lookup_parent(start, path)?;
        let id = self.child(dir, &name)?.ok_or(FsErr::NoEntry)?;
        if !self.entries(id)?.is_empty() {
            return Err(FsErr::NotEmpty);
        }
        self.require_removable(dir, id)?;
        self.detach(dir, &name)?;
        self.release_if_orphan(id);
        Ok(())
    }

    /// rename(2): replaces a compatible target, refuses to move a folder
    /// into itself.
    pub fn rename(
        &mut self,
        old_start: NodeId,
        old_path: &str,
        new_start: NodeId,
        new_path: &str,
    ) -> Result<(), FsErr> {
        let (old_dir, old_name) = self.lookup_parent(old_start, old_path)?;
        let (new_dir, new_name) = self.lookup_parent(new_start, new_path)?;
        if [old_name.as_str(), new_name.as_str()]
            .iter()
            .any(|n| *n == "." || *n == "..")
        {
            return Err(FsErr::Busy);
        }
        let id = self.child(old_dir, &old_name)?.ok_or(FsErr::NoEntry)?;
        let moving_dir = self.node_type(id)? == NodeType::Dir;
        if moving_dir && self.is_ancestor(id, new_dir)? {
            return Err(FsErr::Invalid);
        }
        self.require_removable(old_dir, id)?;
        self.require_dir_write(new_dir)?;
        if moving_dir && old_dir != new_dir {
            // Its `..` changes.
            self.require(id, MAY_WRITE)?;
        }
        if let Some(existing) = self.child(new_dir, &new_name)? {
            if existing == id {
                return Ok(());
            }
            self.require_removable(new_dir, existing)?;
            match (moving_dir, self.node_type(existing)? == NodeType::Dir) {
                (true, false) => return Err(FsErr::NotDirectory),
                (false, true) => return Err(FsErr::IsDirectory),
                (true, true) if !self.entries(existing)?.is_empty() => {
                    return Err(FsErr::NotEmpty);
                }
                _ => {}
            }
            self.detach(new_dir, &new_name)?;
            self.release_if_orphan(existing);
        }
        self.detach(old_dir, &old_name)?;
        self.insert(new_dir, &new_name, id)?;
        if let NodeKind::Dir { parent, .. } = &mut self.node_mut(id)?.kind {
            *parent = new_dir;
        }
        Ok(())
    }

    /// Whether `ancestor` is `id` or one of the folders above it.
    fn is_ancestor(&self, ancestor: NodeId, mut id: NodeId) -> Result<bool, FsErr> {
        loop {
            if id == ancestor {
                return Ok(true);
            }
            if id == ROOT {
                return Ok(false);
            }
            id = self.parent_of(id)?;
        }
    }

    /// readlink(2): the target of the symlink at `path`.
    pub fn readlink(&self, start: NodeId, path: &str) -> Result<String, FsErr> {
        let id = self.lookup(start, path, false)?;
        match &self.node(id)?.kind {
            NodeKind::Symlink(target) => Ok(target.clone()),
            _ => Err(FsErr::Invalid),
        }
    }

    // ---- contents ----

    /// Up to `len` bytes from `offset`; fewer at the end, none past it.
    pub fn read(&mut self, id: NodeId, offset: u64, len: usize) -> Result<Vec<u8>, FsErr> {
        let node = self.node_mut(id)?;
        let out = match &node.kind {
            NodeKind::File(data) => {
                let start = usize::try_from(offset)
                    .unwrap_or(usize::MAX)
                    .min(data.len());
                let end = start.saturating_add(len).min(data.len());
                data[start..end].to_vec()
            }
            NodeKind::Null | NodeKind::Stdio(_) => Vec::new(),
            NodeKind::Zero | NodeKind::Full => vec![0; len.min(DEVICE_READ_MAX)],
            NodeKind::Random => {
                let mut bytes = vec![0; len.min(DEVICE_READ_MAX)];
                crate::entropy::fill(&mut bytes);
                bytes
            }
            NodeKind::Dir { .. } => return Err(FsErr::IsDirectory),
            NodeKind::Symlink(_) => return Err(FsErr::BadDescriptor),
        };
        node.atime = now();
        Ok(out)
    }

    /// Writes `bytes` at `offset` (zero-filling a gap); returns bytes written.
    pub fn write(&mut self, id: NodeId, offset: u64, bytes: &[u8]) -> Result<usize, FsErr> {
        let size = match &self.node(id)?.kind {
            NodeKind::File(data) => data.len() as u64,
            NodeKind::Null | NodeKind::Zero | NodeKind::Random | NodeKind::Stdio(_) => {
                return Ok(bytes.len());
            }
            NodeKind::Full => return Err(FsErr::NoSpace),
            NodeKind::Dir { .. } => return Err(FsErr::IsDirectory),
            NodeKind::Symlink(_) => return Err(FsErr::BadDescriptor),
        };
        let end = offset
            .checked_add(bytes.len() as u64)
            .ok_or(FsErr::FileTooLarge)?;
        if end > size {
            self.charge_bytes(end - size)?;
        }
        let start = usize::try_from(offset).map_err(|_| FsErr::FileTooLarge)?;
        let end = usize::try_from(end).map_err(|_| FsErr::FileTooLarge)?;
        let node = self.node_mut(id)?;
        if let NodeKind::File(data) = &mut node.kind {
            let data = data.make_mut();
            if data.len() < end {
                data.resize(end, 0);
            }
            data[start..end].copy_from_slice(bytes);
        }
        let t = now();
        node.mtime = t;
        node.ctime = t;
        Ok(bytes.len())
    }

    /// Appends `bytes`; returns bytes written.
    pub fn append(&mut self, id: NodeId, bytes: &[u8]) -> Result<usize, FsErr> {
        let size = self.stat(id)?.size;
        self.write(id, size, bytes)
    }

    /// truncate(2): cuts or zero-extends a file to `size` bytes.
    pub fn set_size(&mut self, id: NodeId, size: u64) -> Result<(), FsErr> {
        let old = match &self.node(id)?.kind {
            NodeKind::File(data) => data.len() as u64,
            NodeKind::Null
            | NodeKind::Zero
            | NodeKind::Full
            | NodeKind::Random
            | NodeKind::Stdio(_) => return Ok(()),
            NodeKind::Dir { .. } => return Err(FsErr::IsDirectory),
            NodeKind::Symlink(_) => return Err(FsErr::Invalid),
        };
        if size > old {
            self.charge_bytes(size - old)?;
        } else {
            self.used_bytes = self.used_bytes.saturating_sub(old - size);
        }
        let new_len = usize::try_from(size).map_err(|_| FsErr::FileTooLarge)?;
        let node = self.node_mut(id)?;
        if let NodeKind::File(data) = &mut node.kind {
            let data = data.make_mut();
            data.resize(new_len, 0);
            if size < old {
                data.shrink_to_fit();
            }
        }
        let t = now();
        node.mtime = t;
        node.ctime = t;
        Ok(())
    }

    /// stat(2) of node `id` (a symlink's own, not its target's).
    pub fn stat(&self, id: NodeId) -> Result<Stat, FsErr> {
        let node = self.node(id)?;
        let (node_type, size, link_count) = match &node.kind {
            NodeKind::File(data) => (NodeType::File, data.len() as u64, node.links as u64),
            NodeKind::Dir { entries, .. } => {
                let subdirs = entries
                    .values()
                    .filter(|c| matches!(self.node_type(**c), Ok(NodeType::Dir)))
                    .count() as u64;
                (NodeType::Dir, 4096, 2 + subdirs)
            }
            NodeKind::Symlink(t) => (NodeType::Symlink, t.len() as u64, node.links as u64),
            NodeKind::Null
            | NodeKind::Zero
            | NodeKind::Full
            | NodeKind::Random
            | NodeKind::Stdio(_) => (NodeType::CharDevice, 0, node.links as u64),
        };
        Ok(Stat {
            node_type,
            mode: node.mode,
            uid: node.uid,
            link_count,
            size,
            atime: node.atime,
            mtime: node.mtime,
            ctime: node.ctime,
        })
    }

    /// The entries of a folder, in name order (without `.` and `..`).
    pub fn readdir(&self, dir: NodeId) -> Result<Vec<(String, NodeType)>, FsErr> {
        self.require(dir, MAY_READ)?;
        self.entries(dir)?
            .iter()
            .map(|(name, id)| Ok((name.clone(), self.node_type(*id)?)))
            .collect()
    }

    /// utimensat(2): any time for the owner, only now for one who may write.
    pub fn set_times(&mut self, id: NodeId, atime: TimeSet, mtime: TimeSet) -> Result<(), FsErr> {
        // Setting both to now needs only write permission; any other time
        // needs ownership (utimensat(2)).
        let only_now = matches!(atime, TimeSet::Now | TimeSet::Keep)
            && matches!(mtime, TimeSet::Now | TimeSet::Keep);
        if self.require_owner(id).is_err() {
            if !only_now {
                return Err(FsErr::NotPermitted);
            }
            self.require(id, MAY_WRITE)?;
        }
        let t = now();
        let node = self.node_mut(id)?;
        for (slot, set) in [(&mut node.atime, atime), (&mut node.mtime, mtime)] {
            match set {
                TimeSet::Keep => {}
                TimeSet::Now => *slot = t,
                TimeSet::At(d) => *slot = d,
            }
        }
        node.ctime = t;
        Ok(())
    }

    /// chmod(2): only the owner (or root) may.
    pub fn set_mode(&mut self, id: NodeId, mode: u32) -> Result<(), FsErr> {
        self.require_owner(id)?;
        let node = self.node_mut(id)?;
        node.mode = mode & 0o7777;
        node.ctime = now();
        Ok(())
    }

    /// `st_mode`: type bits and permission bits together.
    pub fn st_mode(&self, id: NodeId) -> Result<u32, FsErr> {
        let node = self.node(id)?;
        let kind = match node.kind {
            NodeKind::File(_) => S_IFREG,
            NodeKind::Dir { .. } => S_IFDIR,
            NodeKind::Symlink(_) => S_IFLNK,
            NodeKind::Null
            | NodeKind::Zero
            | NodeKind::Full
            | NodeKind::Random
            | NodeKind::Stdio(_) => S_IFCHR,
        };
        Ok(kind | node.mode)
    }

    // ---- building the initial layout ----

    /// Creates every missing folder of the absolute `path` (like `mkdir -p`).
    pub fn mkdir_all(&mut self, path: &str, mode: u32) -> Result<NodeId, FsErr> {
        let mut cur = ROOT;
        for comp in path.split('/').filter(|c| !c.is_empty()) {
            cur = match self.child(cur, comp)? {
                Some(id) => id,
                None => {
                    let id = self.mkdir(cur, comp)?;
                    self.set_mode(id, mode)?;
                    id
                }
            };
        }
        Ok(cur)
    }

    /// Writes a whole file at the absolute `path`, creating its folders.
    pub fn put_file(&mut self, path: &str, contents: &[u8], mode: u32) -> Result<NodeId, FsErr> {
        let (dir_path, _) = path.rsplit_once('/').ok_or(FsErr::Invalid)?;
        self.mkdir_all(dir_path, 0o755)?;
        let spec = OpenSpec {
            follow: true,
            create: true,
            truncate: true,
            ..OpenSpec::default()
        };
        let id = self.open(ROOT, path, spec)?;
        self.write(id, 0, contents)?;
        self.set_mode(id, mode)?;
        Ok(id)
    }

    /// Puts `contents` at the absolute `path` without copying them: every
    /// tree cloned from this one shares the bytes (see [`NodeKind::File`]).
    pub fn put_shared_file(
        &mut self,
        path: &str,
        contents: FileBytes,
        mode: u32,
    ) -> Result<NodeId, FsErr> {
        let id = self.put_file(path, &[], mode)?;
        self.charge_bytes(contents.len() as u64)?;
        let node = self.node_mut(id)?;
        node.kind = NodeKind::File(contents);
        Ok(id)
    }

    /// Adds `/dev/null` under the absolute folder `dev`.
    pub fn put_dev_null(&mut self, dev: &str) -> Result<(), FsErr> {
        self.put_device(dev, "null", NodeKind::Null, 0o666)
    }

    /// Adds a device node `name` of `kind` under the absolute folder `dir`.
    pub fn put_device(
        &mut self,
        dir: &str,
        name: &str,
        kind: NodeKind,
        mode: u32,
    ) -> Result<(), FsErr> {
        let dir = self.mkdir_all(dir, 0o755)?;
        let id = self.alloc(kind, mode)?;
        self.insert(dir, name, id)
    }
}

/// The most one read of a device (`/dev/zero`, `/dev/urandom`) returns.
const DEVICE_READ_MAX: usize = 1 << 20;

fn check_name(name: &str) -> Result<(), FsErr> {
    if name.len() > NAME_MAX {
        return Err(FsErr::NameTooLong);
    }
    if name.contains('\0') {
        return Err(FsErr::Invalid);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> Tree {
        Tree::new(Quota {
            max_bytes: 1024,
            max_nodes: 16,
        })
    }

    fn create() -> OpenSpec {
        OpenSpec {
            follow: true,
            create: true,
            ..OpenSpec::default()
        }
    }

    #[test]
    fn dot_dot_stops_at_the_root() {
        let mut t = tree();
        t.mkdir_all("/tmp/a", 0o755).unwrap();
        let a = t.lookup(ROOT, "tmp/a", true).unwrap();
        assert_eq!(t.lookup(a, "../../../../..", true).unwrap(), ROOT);
        assert_eq!(t.lookup(a, "/../../etc/..", true), Err(FsErr::NoEntry));
    }

    #[test]
    fn absolute_symlinks_resolve_inside_the_tree() {
        let mut t = tree();
        t.mkdir_all("/tmp", 0o755).unwrap();
        t.symlink("/etc/passwd", ROOT, "tmp/out").unwrap();
        assert_eq!(t.lookup(ROOT, "tmp/out", true), Err(FsErr::NoEntry));
        t.put_file("/etc/passwd", b"worker", 0o644).unwrap();
        let id = t.lookup(ROOT, "tmp/out", true).unwrap();
        assert_eq!(t.read(id, 0, 100).unwrap(), b"worker");
    }

    #[test]
    fn symlink_loops_end_in_eloop() {
        let mut t = tree();
        t.symlink("b", ROOT, "a").unwrap();
        t.symlink("a", ROOT, "b").unwrap();
        assert_eq!(t.lookup(ROOT, "a", true), Err(FsErr::Loop));
        assert!(t.lookup(ROOT, "a", false).is_ok());
    }

    #[test]
    fn byte_quota_refuses_growth_and_is_reported() {
        let mut t = tree();
        let f = t.open(ROOT, "f", create()).unwrap();
        assert_eq!(t.write(f, 0, &[1; 1000]), Ok(1000));
        assert_eq!(t.write(f, 1000, &[1; 100]), Err(FsErr::NoSpace));
        assert_eq!(t.quota_hit(), Some(QuotaHit::Bytes));
        // Overwriting in place needs no new bytes.
        assert_eq!(t.write(f, 0, &[2; 10]), Ok(10));
        t.set_size(f, 0).unwrap();
        assert_eq!(t.usage().0, 0);
    }

    #[test]
    fn node_quota_refuses_creation() {
        let mut t = tree();
        for i in 0..15 {
            t.mkdir(ROOT, &format!("d{i}")).unwrap();
        }
        assert_eq!(t.mkdir(ROOT, "one-more"), Err(FsErr::Quota));
        assert_eq!(t.quota_hit(), Some(QuotaHit::Nodes));
        t.rmdir(ROOT, "d0").unwrap();
        assert!(t.mkdir(ROOT, "now-fits").is_ok());
    }

    #[test]
    fn unlinked_open_file_lives_until_closed() {
        let mut t = tree();
        let f = t.open(ROOT, "f", create()).unwrap();
        t.retain(f).unwrap();
        t.write(f, 0, b"data").unwrap();
        t.unlink(ROOT, "f").unwrap();
        assert_eq!(t.read(f, 0, 10).unwrap(), b"data");
        t.release(f);
        assert_eq!(t.usage(), (0, 1));
    }

    #[test]
    fn rename_refuses_a_folder_into_itself() {
        let mut t = tree();
        t.mkdir_all("/a/b", 0o755).unwrap();
        assert_eq!(t.rename(ROOT, "a", ROOT, "a/b/c"), Err(FsErr::Invalid));
        t.rename(ROOT, "a/b", ROOT, "c").unwrap();
        let c = t.lookup(ROOT, "c", true).unwrap();
        assert_eq!(t.lookup(c, "..", true).unwrap(), ROOT);
    }

    #[test]
    fn trailing_slash_on_a_file_is_not_a_directory() {
        let mut t = tree();
        t.put_file("/f", b"", 0o644).unwrap();
        assert_eq!(t.lookup(ROOT, "f/", true), Err(FsErr::NotDirectory));
        assert_eq!(t.lookup(ROOT, "f/x", true), Err(FsErr::NotDirectory));
    }

    #[test]
    fn exclusive_create_of_existing_file_fails() {
        let mut t = tree();
        t.put_file("/f", b"", 0o644).unwrap();
        let spec = OpenSpec {
            exclusive: true,
            ..create()
        };
        assert_eq!(t.open(ROOT, "f", spec), Err(FsErr::Exists));
    }

    #[test]
    fn dev_null_swallows_writes() {
        let mut t = tree();
        t.put_dev_null("/dev").unwrap();
        let n = t.lookup(ROOT, "/dev/null", true).unwrap();
        assert_eq!(t.write(n, 0, &[0; 4096]), Ok(4096));
        assert_eq!(t.read(n, 0, 10).unwrap(), b"");
        assert_eq!(t.usage().0, 0);
    }

    #[test]
    fn huge_sparse_write_is_refused_not_allocated() {
        let mut t = tree();
        let f = t.open(ROOT, "f", create()).unwrap();
        assert_eq!(t.write(f, u64::MAX - 1, b"xx"), Err(FsErr::FileTooLarge));
        assert_eq!(t.write(f, 1 << 40, b"x"), Err(FsErr::NoSpace));
        assert_eq!(t.set_size(f, 1 << 40), Err(FsErr::NoSpace));
    }
}
