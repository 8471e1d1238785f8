//! Conversions between the runtime's types and their wire forms. Times
//! travel as integer micro- or milliseconds; sizes as `u64`.

use std::time::Duration;

use ephemeral_runtime::{
    ExecOutcome, FileError, FileInfo, FileKind, LimitHit, Limits, SandboxUsage, Stream,
};

use crate::protocol::{
    FileRefusal, WireExit, WireFileInfo, WireFileKind, WireLimit, WireLimits, WireStream, WireUsage,
};

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl From<Limits> for WireLimits {
    fn from(l: Limits) -> WireLimits {
        WireLimits {
            command_timeout_ms: millis(l.command_timeout),
            sandbox_timeout_ms: millis(l.sandbox_timeout),
            memory_bytes: l.memory_bytes as u64,
            output_bytes: l.output_bytes as u64,
            disk_bytes: l.disk_bytes,
            disk_files: l.disk_files,
        }
    }
}

impl From<WireLimits> for Limits {
    fn from(l: WireLimits) -> Limits {
        Limits {
            command_timeout: Duration::from_millis(l.command_timeout_ms),
            sandbox_timeout: Duration::from_millis(l.sandbox_timeout_ms),
            memory_bytes: usize::try_from(l.memory_bytes).unwrap_or(usize::MAX),
            output_bytes: usize::try_from(l.output_bytes).unwrap_or(usize::MAX),
            disk_bytes: l.disk_bytes,
            disk_files: l.disk_files,
        }
    }
}

impl From<Stream> for WireStream {
    fn from(s: Stream) -> WireStream {
        match s {
            Stream::Stdout => WireStream::Stdout,
            Stream::Stderr => WireStream::Stderr,
        }
    }
}

impl From<WireStream> for Stream {
    fn from(s: WireStream) -> Stream {
        match s {
            WireStream::Stdout => Stream::Stdout,
            WireStream::Stderr => Stream::Stderr,
        }
    }
}

impl From<LimitHit> for WireLimit {
    fn from(l: LimitHit) -> WireLimit {
        match l {
            LimitHit::CommandTimeout => WireLimit::CommandTimeout,
            LimitHit::SandboxTimeout => WireLimit::SandboxTimeout,
            LimitHit::Memory => WireLimit::Memory,
            LimitHit::Output => WireLimit::Output,
            LimitHit::DiskBytes => WireLimit::DiskBytes,
            LimitHit::DiskFiles => WireLimit::DiskFiles,
            LimitHit::Pipe => WireLimit::Pipe,
            LimitHit::Stack => WireLimit::Stack,
        }
    }
}

impl From<WireLimit> for LimitHit {
    fn from(l: WireLimit) -> LimitHit {
        match l {
            WireLimit::CommandTimeout => LimitHit::CommandTimeout,
            WireLimit::SandboxTimeout => LimitHit::SandboxTimeout,
            WireLimit::Memory => LimitHit::Memory,
            WireLimit::Output => LimitHit::Output,
            WireLimit::DiskBytes => LimitHit::DiskBytes,
            WireLimit::DiskFiles => LimitHit::DiskFiles,
            WireLimit::Pipe => LimitHit::Pipe,
            WireLimit::Stack => LimitHit::Stack,
        }
    }
}

impl From<&ExecOutcome> for WireExit {
    fn from(o: &ExecOutcome) -> WireExit {
        WireExit {
            exit_code: o.exit_code,
            duration_us: micros(o.duration),
            limit: o.limit.map(WireLimit::from),
            truncated: o.truncated,
            error: None,
        }
    }
}

impl From<&WireExit> for ExecOutcome {
    fn from(e: &WireExit) -> ExecOutcome {
        ExecOutcome {
            exit_code: e.exit_code,
            duration: Duration::from_micros(e.duration_us),
            limit: e.limit.map(LimitHit::from),
            truncated: e.truncated,
        }
    }
}

impl From<&SandboxUsage> for WireUsage {
    fn from(u: &SandboxUsage) -> WireUsage {
        WireUsage {
            commands: u.commands,
            busy_us: micros(u.busy),
            lifetime_us: micros(u.lifetime),
        }
    }
}

impl From<WireUsage> for SandboxUsage {
    fn from(u: WireUsage) -> SandboxUsage {
        SandboxUsage {
            commands: u.commands,
            busy: Duration::from_micros(u.busy_us),
            lifetime: Duration::from_micros(u.lifetime_us),
        }
    }
}

impl From<&FileInfo> for WireFileInfo {
    fn from(i: &FileInfo) -> WireFileInfo {
        WireFileInfo {
            path: i.path.clone(),
            kind: match i.kind {
                FileKind::File => WireFileKind::File,
                FileKind::Dir => WireFileKind::Dir,
                FileKind::Symlink => WireFileKind::Symlink,
            },
            size: i.size,
            mode: i.mode,
            modified_ms: millis(i.modified),
        }
    }
}

impl From<&FileError> for FileRefusal {
    fn from(e: &FileError) -> FileRefusal {
        match e {
            FileError::BadPath(_) => FileRefusal::BadPath,
            FileError::NotFound(_) => FileRefusal::NotFound,
            FileError::IsFolder(_) => FileRefusal::IsFolder,
            FileError::NotFolder(_) => FileRefusal::NotFolder,
            FileError::Denied(_) => FileRefusal::Denied,
            FileError::Quota { .. } => FileRefusal::Quota,
            FileError::Other { .. } => FileRefusal::Other,
        }
    }
}
