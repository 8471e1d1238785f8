//! `wasi:filesystem/types` and `wasi:filesystem/preopens` over the tree.
//!
//! Each function is a thin translation: WASI arguments in, one `Tree` call,
//! WASI result out. The only preopen is `/`, the root of the sandbox's own
//! tree; wasi-libc resolves every absolute path against it.

use std::time::Duration;

use wasmtime::component::{Resource, ResourceTableError};
use wasmtime_wasi::p2::bindings::sync::io::streams::{Error as IoError, InputStream, OutputStream};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream};

use super::streams::{FileReader, FileWriter};
use super::tree::{NodeType, OpenSpec, Stat, TimeSet};
use super::{Descriptor, DirEntries, FsErr, MemFsView, NodeId, ROOT};
use crate::bindings::fs_types::{
    self, Advice, DescriptorFlags, DescriptorStat, DescriptorType, DirectoryEntry, ErrorCode,
    Filesize, MetadataHashValue, NewTimestamp, OpenFlags, PathFlags,
};
use crate::bindings::preopens;
use wasmtime_wasi::p2::bindings::clocks::wall_clock::Datetime;

impl From<FsErr> for ErrorCode {
    fn from(e: FsErr) -> ErrorCode {
        error_code(e)
    }
}

/// A handle the guest passed that is not in its table: for a filesystem
/// call that is a bad descriptor, not a reason to trap the host call.
impl From<ResourceTableError> for ErrorCode {
    fn from(_: ResourceTableError) -> ErrorCode {
        ErrorCode::BadDescriptor
    }
}

type FsResult<T> = Result<T, ErrorCode>;

fn error_code(e: FsErr) -> ErrorCode {
    match e {
        FsErr::NoEntry => ErrorCode::NoEntry,
        FsErr::NotDirectory => ErrorCode::NotDirectory,
        FsErr::IsDirectory => ErrorCode::IsDirectory,
        FsErr::Exists => ErrorCode::Exist,
        FsErr::NotEmpty => ErrorCode::NotEmpty,
        FsErr::Loop => ErrorCode::Loop,
        FsErr::NameTooLong => ErrorCode::NameTooLong,
        FsErr::Invalid => ErrorCode::Invalid,
        FsErr::NoSpace => ErrorCode::InsufficientSpace,
        FsErr::Quota => ErrorCode::Quota,
        FsErr::FileTooLarge => ErrorCode::FileTooLarge,
        FsErr::NotPermitted => ErrorCode::NotPermitted,
        FsErr::Access => ErrorCode::Access,
        FsErr::Busy => ErrorCode::Busy,
        FsErr::BadDescriptor => ErrorCode::BadDescriptor,
    }
}

fn datetime(d: Duration) -> Datetime {
    Datetime {
        seconds: d.as_secs(),
        nanoseconds: d.subsec_nanos(),
    }
}

fn time_set(t: NewTimestamp) -> TimeSet {
    match t {
        NewTimestamp::NoChange => TimeSet::Keep,
        NewTimestamp::Now => TimeSet::Now,
        NewTimestamp::Timestamp(d) => {
            TimeSet::At(Duration::new(d.seconds, d.nanoseconds.min(999_999_999)))
        }
    }
}

fn descriptor_type(t: NodeType) -> DescriptorType {
    match t {
        NodeType::File => DescriptorType::RegularFile,
        NodeType::Dir => DescriptorType::Directory,
        NodeType::Symlink => DescriptorType::SymbolicLink,
        NodeType::CharDevice => DescriptorType::CharacterDevice,
    }
}

fn descriptor_stat(s: Stat) -> DescriptorStat {
    DescriptorStat {
        type_: descriptor_type(s.node_type),
        link_count: s.link_count,
        size: s.size,
        data_access_timestamp: Some(datetime(s.atime)),
        data_modification_timestamp: Some(datetime(s.mtime)),
        status_change_timestamp: Some(datetime(s.ctime)),
    }
}

impl MemFsView<'_> {
    fn desc(&self, d: &Resource<Descriptor>) -> FsResult<(usize, bool, bool)> {
        let d = self.table.get(d)?;
        Ok((d.node, d.readable, d.writable))
    }

    fn node(&self, d: &Resource<Descriptor>) -> FsResult<usize> {
        Ok(self.desc(d)?.0)
    }

    /// The node of a descriptor opened for reading.
    fn readable(&self, d: &Resource<Descriptor>) -> FsResult<usize> {
        match self.desc(d)? {
            (node, true, _) => Ok(node),
            _ => Err(FsErr::BadDescriptor.into()),
        }
    }

    /// The node of a descriptor opened for writing.
    fn writable(&self, d: &Resource<Descriptor>) -> FsResult<usize> {
        match self.desc(d)? {
            (node, _, true) => Ok(node),
            _ => Err(FsErr::BadDescriptor.into()),
        }
    }

    /// The node of a descriptor that must be a folder.
    fn dir(&self, d: &Resource<Descriptor>) -> FsResult<usize> {
        let node = self.node(d)?;
        match self.fs.lock().node_type(node)? {
            NodeType::Dir => Ok(node),
            _ => Err(FsErr::NotDirectory.into()),
        }
    }

    fn push_descriptor(
        &mut self,
        node: usize,
        readable: bool,
        writable: bool,
    ) -> FsResult<Resource<Descriptor>> {
        self.fs.lock().retain(node)?;
        let d = Descriptor {
            node,
            readable,
            writable,
        };
        match self.table.push(d) {
            Ok(r) => Ok(r),
            Err(e) => {
                self.fs.lock().release(node);
                Err(e.into())
            }
        }
    }
}

/// Paths in `*-at` calls are relative to their descriptor, as in WASI:
/// an absolute one is refused rather than silently re-rooted.
fn relative(path: &str) -> FsResult<&str> {
    if path.starts_with('/') {
        return Err(FsErr::NotPermitted.into());
    }
    Ok(path)
}

impl fs_types::Host for MemFsView<'_> {
    fn filesystem_error_code(&mut self, err: Resource<IoError>) -> Option<ErrorCode> {
        let err = self.table.get(&err).ok()?;
        err.downcast_ref::<FsErr>().map(|e| error_code(*e))
    }
}

impl fs_types::HostDescriptor for MemFsView<'_> {
    fn read_via_stream(
        &mut self,
        d: Resource<Descriptor>,
        offset: Filesize,
    ) -> FsResult<Resource<InputStream>> {
        let node = self.readable(&d)?;
        // The tree's lock is released before a reader takes it again.
        let stdio = self.fs.lock().stdio_of(node)?;
        let reader: DynInputStream = match stdio {
            Some(0) => (self.stdio.stdin)(),
            Some(_) => return Err(FsErr::BadDescriptor.into()),
            None => Box::new(FileReader::new(self.fs.clone(), node, offset)?),
        };
        Ok(self.table.push(reader)?)
    }

    fn write_via_stream(
        &mut self,
        d: Resource<Descriptor>,
        offset: Filesize,
    ) -> FsResult<Resource<OutputStream>> {
        self.writer(d, Some(offset))
    }

    fn append_via_stream(&mut self, d: Resource<Descriptor>) -> FsResult<Resource<OutputStream>> {
        self.writer(d, None)
    }

    fn advise(
        &mut self,
        d: Resource<Descriptor>,
        _: Filesize,
        _: Filesize,
        _: Advice,
    ) -> FsResult<()> {
        self.node(&d)?;
        Ok(())
    }

    fn sync_data(&mut self, d: Resource<Descriptor>) -> FsResult<()> {
        self.node(&d)?;
        Ok(())
    }

    fn get_flags(&mut self, d: Resource<Descriptor>) -> FsResult<DescriptorFlags> {
        let (node, readable, writable) = self.desc(&d)?;
        let mut flags = DescriptorFlags::empty();
        if readable {
            flags |= DescriptorFlags::READ;
        }
        if writable {
            flags |= DescriptorFlags::WRITE;
            if self.fs.lock().node_type(node)? == NodeType::Dir {
                flags |= DescriptorFlags::MUTATE_DIRECTORY;
            }
        }
        Ok(flags)
    }

    fn get_type(&mut self, d: Resource<Descriptor>) -> FsResult<DescriptorType> {
        let node = self.node(&d)?;
        Ok(descriptor_type(self.fs.lock().node_type(node)?))
    }

    fn set_size(&mut self, d: Resource<Descriptor>, size: Filesize) -> FsResult<()> {
        let node = self.writable(&d)?;
        Ok(self.fs.lock().set_size(node, size)?)
    }

    fn set_times(
        &mut self,
        d: Resource<Descriptor>,
        atime: NewTimestamp,
        mtime: NewTimestamp,
    ) -> FsResult<()> {
        let node = self.node(&d)?;
        Ok(self
            .fs
            .lock()
            .set_times(node, time_set(atime), time_set(mtime))?)
    }

    fn read(
        &mut self,
        d: Resource<Descriptor>,
        len: Filesize,
        offset: Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        let node = self.readable(&d)?;
        let len = usize::try_from(len).unwrap_or(usize::MAX).min(1 << 20);
        let mut tree = self.fs.lock();
        let data = tree.read(node, offset, len)?;
        let end = offset.saturating_add(data.len() as u64) >= tree.stat(node)?.size;
        Ok((data, end))
    }

    fn write(
        &mut self,
        d: Resource<Descriptor>,
        buf: Vec<u8>,
        offset: Filesize,
    ) -> FsResult<Filesize> {
        let node = self.writable(&d)?;
        Ok(self.fs.lock().write(node, offset, &buf)? as u64)
    }

    fn read_directory(&mut self, d: Resource<Descriptor>) -> FsResult<Resource<DirEntries>> {
        let dir = self.dir(&d)?;
        let entries: Vec<DirectoryEntry> = self
            .fs
            .lock()
            .readdir(dir)?
            .into_iter()
            .map(|(name, t)| DirectoryEntry {
                type_: descriptor_type(t),
                name,
            })
            .collect();
        Ok(self.table.push(DirEntries {
            entries: entries.into_iter(),
        })?)
    }

    fn sync(&mut self, d: Resource<Descriptor>) -> FsResult<()> {
        self.node(&d)?;
        Ok(())
    }

    fn create_directory_at(&mut self, d: Resource<Descriptor>, path: String) -> FsResult<()> {
        let dir = self.dir(&d)?;
        let mode = 0o777 & !self.umask;
        self.fs.lock().mkdir_mode(dir, relative(&path)?, mode)?;
        Ok(())
    }

    fn stat(&mut self, d: Resource<Descriptor>) -> FsResult<DescriptorStat> {
        let node = self.node(&d)?;
        Ok(descriptor_stat(self.fs.lock().stat(node)?))
    }

    fn stat_at(
        &mut self,
        d: Resource<Descriptor>,
        flags: PathFlags,
        path: String,
    ) -> FsResult<DescriptorStat> {
        let dir = self.dir(&d)?;
        let tree = self.fs.lock();
        let follow = flags.contains(PathFlags::SYMLINK_FOLLOW);
        let node = tree.lookup(dir, relative(&path)?, follow)?;
        Ok(descriptor_stat(tree.stat(node)?))
    }

    fn set_times_at(
        &mut self,
        d: Resource<Descriptor>,
        flags: PathFlags,
        path: String,
        atime: NewTimestamp,
        mtime: NewTimestamp,
    ) -> FsResult<()> {
        let dir = self.dir(&d)?;
        let mut tree = self.fs.lock();
        let follow = flags.contains(PathFlags::SYMLINK_FOLLOW);
        let node = tree.lookup(dir, relative(&path)?, follow)?;
        Ok(tree.set_times(node, time_set(atime), time_set(mtime))?)
    }

    fn link_at(
        &mut self,
        d: Resource<Descriptor>,
        flags: PathFlags,
        old_path: String,
        new_d: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        let old_dir = self.dir(&d)?;
        let new_dir = self.dir(&new_d)?;
        let follow = flags.contains(PathFlags::SYMLINK_FOLLOW);
        Ok(self.fs.lock().link(
            old_dir,
            relative(&old_path)?,
            follow,
            new_dir,
            relative(&new_path)?,
        )?)
    }

    fn open_at(
        &mut self,
        d: Resource<Descriptor>,
        path_flags: PathFlags,
        path: String,
        open_flags: OpenFlags,
        flags: DescriptorFlags,
    ) -> FsResult<Resource<Descriptor>> {
        let (dir, _, dir_writable) = self.desc(&d)?;
        let writable = flags.contains(DescriptorFlags::WRITE);
        let spec = OpenSpec {
            follow: path_flags.contains(PathFlags::SYMLINK_FOLLOW),
            create: open_flags.contains(OpenFlags::CREATE),
            exclusive: open_flags.contains(OpenFlags::EXCLUSIVE),
            truncate: open_flags.contains(OpenFlags::TRUNCATE),
            directory: open_flags.contains(OpenFlags::DIRECTORY),
            read: flags.contains(DescriptorFlags::READ) || !writable,
            write: writable,
            mode: 0o666 & !self.umask,
        };
        if (spec.create || spec.truncate || writable) && !dir_writable {
            return Err(FsErr::NotPermitted.into());
        }
        let node = {
            let mut tree = self.fs.lock();
            if tree.node_type(dir)? != NodeType::Dir {
                return Err(FsErr::NotDirectory.into());
            }
            tree.open(dir, relative(&path)?, spec)?
        };
        let readable = flags.contains(DescriptorFlags::READ) || !writable;
        self.push_descriptor(node, readable, writable || self.is_dir(node)?)
    }

    fn readlink_at(&mut self, d: Resource<Descriptor>, path: String) -> FsResult<String> {
        let dir = self.dir(&d)?;
        Ok(self.fs.lock().readlink(dir, relative(&path)?)?)
    }

    fn remove_directory_at(&mut self, d: Resource<Descriptor>, path: String) -> FsResult<()> {
        let dir = self.dir(&d)?;
        Ok(self.fs.lock().rmdir(dir, relative(&path)?)?)
    }

    fn rename_at(
        &mut self,
        d: Resource<Descriptor>,
        old_path: String,
        new_d: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        let old_dir = self.dir(&d)?;
        let new_dir = self.dir(&new_d)?;
        Ok(self
            .fs
            .lock()
            .rename(old_dir, relative(&old_path)?, new_dir, relative(&new_path)?)?)
    }

    fn symlink_at(
        &mut self,
        d: Resource<Descriptor>,
        target: String,
        path: String,
    ) -> FsResult<()> {
        let dir = self.dir(&d)?;
        Ok(self.fs.lock().symlink(&target, dir, relative(&path)?)?)
    }

    fn unlink_file_at(&mut self, d: Resource<Descriptor>, path: String) -> FsResult<()> {
        let dir = self.dir(&d)?;
        Ok(self.fs.lock().unlink(dir, relative(&path)?)?)
    }

    fn is_same_object(&mut self, a: Resource<Descriptor>, b: Resource<Descriptor>) -> bool {
        match (self.table.get(&a), self.table.get(&b)) {
            (Ok(a), Ok(b)) => a.node == b.node,
            _ => false,
        }
    }

    fn metadata_hash(&mut self, d: Resource<Descriptor>) -> FsResult<MetadataHashValue> {
        let node = self.node(&d)?;
        Ok(metadata_hash(node))
    }

    fn metadata_hash_at(
        &mut self,
        d: Resource<Descriptor>,
        flags: PathFlags,
        path: String,
    ) -> FsResult<MetadataHashValue> {
        let dir = self.dir(&d)?;
        let follow = flags.contains(PathFlags::SYMLINK_FOLLOW);
        let node = self.fs.lock().lookup(dir, relative(&path)?, follow)?;
        Ok(metadata_hash(node))
    }

    fn drop(&mut self, d: Resource<Descriptor>) -> wasmtime::Result<()> {
        let d = self.table.delete(d)?;
        self.fs.lock().release(d.node);
        Ok(())
    }
}

impl MemFsView<'_> {
    fn writer(
        &mut self,
        d: Resource<Descriptor>,
        offset: Option<Filesize>,
    ) -> FsResult<Resource<OutputStream>> {
        let node = self.writable(&d)?;
        let stdio = self.fs.lock().stdio_of(node)?;
        let writer: DynOutputStream = match stdio {
            Some(1) => (self.stdio.stdout)(),
            Some(2) => (self.stdio.stderr)(),
            Some(_) => return Err(FsErr::BadDescriptor.into()),
            None => Box::new(FileWriter::new(self.fs.clone(), node, offset)?),
        };
        Ok(self.table.push(writer)?)
    }

    fn is_dir(&self, node: usize) -> FsResult<bool> {
        Ok(self.fs.lock().node_type(node)? == NodeType::Dir)
    }
}

fn metadata_hash(node: usize) -> MetadataHashValue {
    MetadataHashValue {
        lower: node as u64,
        upper: 0,
    }
}

impl fs_types::HostDirectoryEntryStream for MemFsView<'_> {
    fn read_directory_entry(
        &mut self,
        s: Resource<DirEntries>,
    ) -> FsResult<Option<DirectoryEntry>> {
        Ok(self.table.get_mut(&s)?.entries.next())
    }

    fn drop(&mut self, s: Resource<DirEntries>) -> wasmtime::Result<()> {
        self.table.delete(s)?;
        Ok(())
    }
}

impl preopens::Host for MemFsView<'_> {
    fn get_directories(&mut self) -> Vec<(Resource<Descriptor>, String)> {
        // Only a full resource table can refuse this; the guest then simply
        // sees no filesystem. A program's own folders come first, read-only,
        // in the order its snapshot numbered them; `/` last.
        let mut dirs = Vec::new();
        let own: Vec<(NodeId, String)> = self.preopens.to_vec();
        for (node, guest) in own {
            if let Ok(d) = self.push_descriptor(node, true, false) {
                dirs.push((d, guest));
            }
        }
        if let Ok(root) = self.push_descriptor(ROOT, true, true) {
            dirs.push((root, "/".to_owned()));
        }
        dirs
    }
}
